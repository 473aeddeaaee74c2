import FetchChannel
import FetchChannelWire
import Foundation

/// The redemption pipeline's own cost: the dedupe check and the bookkeeping per token (begin, a
/// duplicate delivery refused, finish into the bounded redeemed set with eviction), without the
/// network. Baseline: one `Set<String>.insert` of the same tokens, the least any dedupe costs.
/// Memory: after many times the capacity, the redeemed set holds exactly the capacity and the
/// resident size has not grown. For scale, the unit also gives the rate through the actor itself
/// (`await pipeline.redeem(_:)` with a redeemer that answers at once: two executor hops per token).
enum PipelineBenchmark {
    /// Answers every redemption at once.
    struct InstantRedeemer: OperationRedeeming {
        let answer: RedeemedOperation
        func redeem(_ payload: PendingOutOfBandOperation.Payload) async -> Result<RedeemedOperation, RedemptionError> {
            .success(answer)
        }
    }

    static func row(seconds: Double) async -> BenchmarkRow {
        let capacity = RedemptionPipeline.defaultCapacity
        // Token-like strings (36 characters, as a UUID), allocated before any measurement; the
        // pool is 20 times the capacity, so a token comes back only after it was evicted.
        let pool = (0..<(20 * capacity)).map { index -> String in
            let digits = String(index, radix: 16)
            return String(repeating: "0", count: 36 - digits.count) + digits
        }
        let answer = RedeemedOperation(body: ["statusCode": .integer(1200)])
        var ledger = RedemptionLedger<String>(capacity: capacity)
        var baselineSet = Set<String>()
        var next = 0
        var refused = 0
        let batch = 10_000
        let candidate = {
            for _ in 0..<batch {
                let token = pool[next]
                next = next + 1 == pool.count ? 0 : next + 1
                guard ledger.begin(token) == .unseen else { continue }
                if ledger.begin(token) != .unseen { refused += 1 }  // the duplicate delivery
                _ = ledger.finish(token, with: .success(answer))
            }
        }
        var baselineNext = 0
        let baseline = {
            for _ in 0..<batch {
                baselineSet.insert(pool[baselineNext])
                baselineNext = baselineNext + 1 == pool.count ? 0 : baselineNext + 1
            }
            if baselineSet.count >= capacity { baselineSet.removeAll(keepingCapacity: true) }
        }
        candidate()  // fill the set to capacity before measuring
        let rates = Measurement.compare(
            rounds: 5, secondsPerRound: max(0.05, seconds / 10), batch: batch,
            candidate: candidate, baseline: baseline)

        let before = Measurement.residentBytes()
        for _ in 0..<(200 * capacity / batch) { candidate() }  // 2,000,000 more tokens
        let growthMiB = Double(Measurement.residentBytes() - before) / 1_048_576
        let bounded = ledger.redeemedCount == capacity && ledger.inProgress.isEmpty && growthMiB < 4
        let rate = rates.candidate
        let actorRate = await Self.actorRate(pool: pool, answer: answer, seconds: max(0.2, seconds / 4))
        return BenchmarkRow(
            name: "pipeline-tokens", value: rate.rounded(),
            unit:
                "tokens/s: dedupe check, duplicate refused, bookkeeping (baseline: Set<String>.insert/s); after 2,000,000 more tokens the set holds \(ledger.redeemedCount) (capacity \(capacity)), resident growth \(String(format: "%.2f", growthMiB)) MiB; through the actor: \(Int(actorRate.rounded())) tokens/s",
            baseline: rates.baseline.rounded(),
            ratio: Measurement.ratio(
                rate.rounded(), over: rates.baseline.rounded(), rounding: .toNearestOrAwayFromZero),
            target: ">= 1000000/s", met: rate.rounded() >= 1_000_000 && bounded && refused > 0)
    }

    /// Tokens/s through `RedemptionPipeline.redeem(_:)` (each awaited in turn) with an instant redeemer.
    static func actorRate(pool: [String], answer: RedeemedOperation, seconds: Double) async -> Double {
        let payloads = pool.map {
            PendingOutOfBandOperation.Payload(
                contentType: WireMediaType.json, version: "1",
                redeemData: .init(token: $0, redeemUrl: "https://backend.example/redeem"))
        }
        let pipeline = RedemptionPipeline(redeemer: InstantRedeemer(answer: answer))
        var done = 0
        var next = 0
        let start = Measurement.monotonicSeconds()
        repeat {
            for _ in 0..<10_000 {
                if await pipeline.redeem(payloads[next]).code == "redeemed" { done += 1 }
                next = next + 1 == payloads.count ? 0 : next + 1
            }
        } while Measurement.monotonicSeconds() - start < seconds
        return Double(done) / (Measurement.monotonicSeconds() - start)
    }
}

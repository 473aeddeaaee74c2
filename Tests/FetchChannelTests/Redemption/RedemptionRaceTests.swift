import DeviceSigning
import Foundation
import Testing

@testable import FetchChannel

extension Practices {
    /// Seeded random interleavings of push arrivals, fetch results, user actions, the app's own
    /// retries and injected redemption failures, over a scripted fetcher and redeemer whose every
    /// answer the script releases. After each interleaving: no token was redeemed twice or sent
    /// twice at once, none is stuck in progress, and a token is unredeemed only if every request
    /// for it failed. A failure prints its seed; `PRACTICES_RACE_SEED=<seed> PRACTICES_RACE_COUNT=1`
    /// replays one interleaving.
    ///
    /// The interleavings are split over ten test cases, each under the suite's time limit of its own:
    /// the whole run is minutes under AddressSanitizer on a slow machine, longer than a limit meant
    /// to turn one hang into a failure.
    @Suite struct RedemptionRaceTests {
        static let baseSeed: UInt64 =
            ProcessInfo.processInfo.environment["PRACTICES_RACE_SEED"].flatMap { UInt64($0) } ?? 0x5EED_0006
        static let count = ProcessInfo.processInfo.environment["PRACTICES_RACE_COUNT"].flatMap { Int($0) } ?? 10_000
        static let parts = 10

        @Test(arguments: 0..<parts)
        func tenThousandSeededInterleavingsRedeemEveryTokenAtMostOnce(part: Int) async {
            var failed = 0
            for index in stride(from: part, to: Self.count, by: Self.parts) {
                let seed = Self.baseSeed &+ UInt64(index)
                let problems = await Interleaving(seed: seed).run()
                if !problems.isEmpty {
                    failed += 1
                    Issue.record("seed \(seed): \(problems.joined(separator: "; "))")
                    if failed == 5 { break }
                }
            }
        }
    }
}

/// One seeded interleaving.
private struct Interleaving {
    let seed: UInt64

    func run() async -> [String] {
        var random = SeededRandom(seed: seed)
        let clock = ManualWallClock(millis: 1_750_000_000_000)
        let fetcher = ScriptedFetcher(gated: true)
        let redeemer = GatedRedeemer()
        let policy: ChannelPolicy = Bool.random(using: &random) ? .pushOnly : .accessibility
        let coordinator = FetchCoordinator(
            fetcher: fetcher, pipeline: RedemptionPipeline(redeemer: redeemer), policy: policy,
            clock: clock)
        let tokens = (0..<Int.random(in: 1...4, using: &random)).map { "s\(seed)-t\($0)" }
        let channels: [DispatchChannel] = [.pushNotification, .pushNotification, .link, .qrCode]
        var dispatched: [PendingOutOfBandOperation] = []
        let finished = Locked(0)
        var launched = 0
        var tasks: [Task<Void, Never>] = []

        func launch(_ work: @escaping @Sendable () async -> Void) {
            launched += 1
            tasks.append(
                Task {
                    await work()
                    finished.withLock { $0 += 1 }
                })
        }
        func resolve(_ token: String, succeed: Bool) {
            if redeemer.resolve(token, succeed: succeed), succeed { fetcher.remove(token) }
        }
        /// Lets the launched work run until it waits on the script (bounded, never sleeping).
        func settle() async {
            var last = (-1, -1, -1, -1)
            var stable = 0
            for _ in 0..<200 {
                await Task.yield()
                let now = (
                    await coordinator.statistics.decided, redeemer.waitingTokens.count, fetcher.heldCount,
                    finished.withLock { $0 }
                )
                if now == last { stable += 1 } else { stable = 0 }
                if stable >= 3 { return }
                last = now
            }
        }

        for _ in 0..<Int.random(in: 6...24, using: &random) {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<15 where dispatched.count < tokens.count:
                let operation = Practices.operation(
                    tokens[dispatched.count], created: clock.nowMillis() + Int64(dispatched.count),
                    channel: channels.randomElement(using: &random)!)
                dispatched.append(operation)
                fetcher.set(operations: dispatched.filter { !redeemer.redeemedAtBackend.contains($0.token) })
            case 0..<35 where !dispatched.isEmpty:
                let operation = dispatched.randomElement(using: &random)!
                launch { _ = await coordinator.handle(.incoming(operation.dispatchChannel, operation.payload)) }
            case 35..<55:
                if Bool.random(using: &random) { clock.advance(byMillis: 6_000) }
                let trigger: FetchTrigger = Bool.random(using: &random) ? .userAction : .foreground
                launch { _ = await coordinator.handle(trigger) }
            case 55..<62 where !dispatched.isEmpty:
                let operation = dispatched.randomElement(using: &random)!  // the app retries one itself
                launch { _ = await coordinator.pipeline.redeem(operation) }
            case 62..<75:
                fetcher.releaseAll()
            default:
                if let token = redeemer.waitingTokens.randomElement(using: &random) {
                    resolve(token, succeed: Int.random(in: 0..<10, using: &random) < 6)
                }
            }
            await settle()
        }

        // Drain: answer everything still waiting (failures keep being injected) until all work ended.
        // Bounded by time, not by rounds: on a loaded machine a pool thread can be descheduled for
        // longer than thousands of rounds of yields take, which is not a hang.
        let drainDeadline = ContinuousClock.now + .seconds(30)
        while finished.withLock({ $0 }) < launched || fetcher.heldCount > 0 || !redeemer.waitingTokens.isEmpty {
            if ContinuousClock.now > drainDeadline { return ["the interleaving did not drain in 30 s"] }
            fetcher.releaseAll()
            for token in redeemer.waitingTokens { resolve(token, succeed: Int.random(in: 0..<10, using: &random) < 6) }
            await settle()
        }
        for task in tasks { await task.value }

        var problems = redeemer.violations.map(\.description)
        if fetcher.overlaps > 0 { problems.append("\(fetcher.overlaps) fetches overlapped") }
        let inProgress = await coordinator.pipeline.inProgressTokens
        if !inProgress.isEmpty { problems.append("stuck in progress: \(inProgress.sorted())") }
        let redeemedAtBackend = redeemer.redeemedAtBackend
        for token in tokens {
            let state = await coordinator.pipeline.state(of: .onBackend(token))
            if redeemedAtBackend.contains(token) {
                if state != .redeemed { problems.append("\(token) redeemed at the backend but \(state) here") }
            } else {
                if state == .redeemed { problems.append("\(token) redeemed here but not at the backend") }
                if redeemer.failures(token) != redeemer.calls(token) {
                    problems.append(
                        "\(token) unredeemed after \(redeemer.calls(token)) calls and \(redeemer.failures(token)) failures"
                    )
                }
            }
        }
        return problems
    }
}

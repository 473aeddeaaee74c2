import DeviceSigning
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Synchronization
import Testing

/// Concurrent verifications of the same values while their replay entries expire: each request
/// id is accepted at most once.
///
/// The race this guards against: a thread reads the time while a value is still fresh, is
/// preempted, and another thread meanwhile reads a later time and drops the value's expired
/// entry; the first thread then records the value again and accepts it a second time. The clock
/// below moves one millisecond every few reads and, after some reads (chosen by the seed),
/// lingers until the others have moved it on, as a preempted thread would.
@Suite struct ReplayExpiryBoundaryStressTests {
    typealias F = DeviceSignatureFixtures

    /// Time moves 1 ms every `readsPerMillisecond` reads; after a read chosen by the seed the
    /// caller lingers until two more milliseconds have been read (or a bounded spin ends).
    final class SteppingClock: WallClock {
        let start: Int64
        let readsPerMillisecond: Int64
        let seed: UInt64
        private let reads = Atomic<Int64>(0)

        init(start: Int64, readsPerMillisecond: Int64, seed: UInt64) {
            self.start = start
            self.readsPerMillisecond = readsPerMillisecond
            self.seed = seed
        }

        /// The time the next read starts from, without moving it.
        var peekMillis: Int64 { start + reads.load(ordering: .sequentiallyConsistent) / readsPerMillisecond }

        func nowMillis() -> Int64 {
            let read = reads.wrappingAdd(1, ordering: .sequentiallyConsistent).oldValue
            let now = start + read / readsPerMillisecond
            var random = SplitMix64(seed: seed ^ UInt64(bitPattern: read))
            if random.next() % 8 == 0 {
                var spins = 0
                while peekMillis < now + 2 && spins < 5_000 { spins += 1 }
            }
            return now
        }
    }

    @Test func everyRequestIdIsAcceptedAtMostOnceAcrossTheExpiryBoundary() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["REPLAY_STRESS_SEED"] ?? "") ?? 0x5EED_B0DA
        print("ReplayExpiryBoundaryStressTests seed \(seed) (REPLAY_STRESS_SEED=\(seed) to replay)")
        let threads = 4
        let verificationsPerThread = 800
        let tolerance: Int64 = 20
        let idsPerMillisecond = 1
        let clock = SteppingClock(start: F.t0, readsPerMillisecond: 2, seed: seed)
        let key = try F.fixtureKey()
        let verifier = try F.verifier(key: key.publicKey, clock: clock, toleranceMillis: tolerance)

        // Values for every creation time the run can reach, each signed once: the threads send
        // the same values again and again across their freshness window.
        let lastMillis = F.t0 + Int64(threads * verificationsPerThread) / clock.readsPerMillisecond + 2 * tolerance
        var values: [Int64: [String]] = [:]
        for creation in (F.t0 - tolerance)...lastMillis {
            values[creation] = try (0..<idsPerMillisecond).map { index in
                let signerClock = ManualWallClock(millis: creation)
                return try DeviceSignatureSigner(key: key, dispatchTargetId: F.target, clock: signerClock) {
                    "id-\(creation)-\(index)"
                }.headerValue()
            }
        }
        let table = values

        let outcomes = await DedicatedThreads.run(threads) { thread -> [String: Int] in
            var random = SplitMix64(seed: seed &+ UInt64(thread) &* 0x9E37_79B9)
            var counts: [String: Int] = [:]
            for _ in 0..<verificationsPerThread {
                let creation = clock.peekMillis + Int64.random(in: -tolerance...tolerance, using: &random)
                guard let choices = table[creation], let value = choices.randomElement(using: &random) else { continue }
                switch verifier.verify(value) {
                case .success(let verified): counts[verified.requestId, default: 0] += 1
                case .failure(let rejection): counts[rejection.code, default: 0] += 1
                }
            }
            return counts
        }
        var total: [String: Int] = [:]
        for counts in outcomes { total.merge(counts, uniquingKeysWith: +) }
        let twice = total.filter { $0.key.hasPrefix("id-") && $0.value > 1 }
        #expect(twice.isEmpty, "seed \(seed): accepted more than once: \(twice.sorted { $0.key < $1.key }.prefix(10))")
        // The run reached the boundary: values were accepted and replays of them refused.
        let acceptedIds = total.keys.filter { $0.hasPrefix("id-") }.count
        #expect(acceptedIds > 100, "seed \(seed): \(total.filter { !$0.key.hasPrefix("id-") })")
        #expect((total["REPLAYED_REQUEST"] ?? 0) > 100, "seed \(seed)")
    }
}

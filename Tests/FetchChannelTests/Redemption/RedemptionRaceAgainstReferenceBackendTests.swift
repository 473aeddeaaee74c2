import DeviceSigning
import FetchChannel
import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

extension Practices {
    /// Seeded random interleavings with the real clients against the reference backend: pushes,
    /// user actions and foregrounds (some moving the clock past the throttle window), the app's own
    /// retries, and redemption failures injected at the backend (503), started concurrently or one
    /// after the other. The backend's counters decide: every token redeemed once or, if every
    /// attempt failed, not at all; no redemption request the pipeline did not account for; one
    /// fetch request per fetch. Each interleaving is a new device on one backend.
    @Suite(.dedicatedThread) struct RedemptionRaceAgainstReferenceBackendTests {
        static let baseSeed: UInt64 = 0xBAC_6E9D
        static let interleavings = 200

        @Test func seededInterleavingsRedeemEveryTokenOnceAtTheBackend() async throws {
            let clock = ManualWallClock(millis: ReferenceDevice.startMillis)
            let backend = try ReferenceBackend.start(.init(clock: clock))
            defer { backend.stop() }
            let key = try P256.Signing.PrivateKey()
            var redeemedSomewhere = 0
            var failuresInjected = 0
            for index in 0..<Self.interleavings {
                let seed = Self.baseSeed &+ UInt64(index)
                let device = try ReferenceDevice(backend: backend, clock: clock, key: key, deviceId: "race-\(seed)")
                let result = try await Self.run(device, seed: seed)
                redeemedSomewhere += result.redeemed
                failuresInjected += result.failuresInjected
                if !result.problems.isEmpty {
                    Issue.record("seed \(seed): \(result.problems.joined(separator: "; "))")
                    break
                }
            }
            // The run exercised what it claims to.
            #expect(redeemedSomewhere > Self.interleavings)
            #expect(failuresInjected > Self.interleavings / 4)
        }

        struct Result {
            var problems: [String] = []
            var redeemed = 0
            var failuresInjected = 0
        }

        static func run(_ device: ReferenceDevice, seed: UInt64) async throws -> Result {
            var random = SeededRandom(seed: seed)
            let backend = device.backend
            let before = backend.statistics
            let coordinator = device.coordinator(policy: Bool.random(using: &random) ? .pushOnly : .accessibility)
            let channels: [DispatchChannel] = [.pushNotification, .pushNotification, .link, .qrCode]
            var dispatched: [PendingOutOfBandOperation.Payload] = []
            var triggers: [Task<TriggerOutcome, Never>] = []
            var retries: [Task<RedemptionReport, Never>] = []
            var result = Result()

            for _ in 0..<Int.random(in: 6...16, using: &random) {
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<25 where dispatched.count < 4:
                    dispatched.append(try device.dispatch(channels.randomElement(using: &random)!))
                case 0..<45 where !dispatched.isEmpty:
                    let payload = dispatched.randomElement(using: &random)!
                    triggers.append(Task { await coordinator.handle(.incoming(.pushNotification, payload)) })
                case 45..<70:
                    if Bool.random(using: &random) { device.clock.advance(byMillis: 6_000) }
                    let trigger: FetchTrigger = Bool.random(using: &random) ? .userAction : .foreground
                    triggers.append(Task { await coordinator.handle(trigger) })
                case 70..<80 where !dispatched.isEmpty:
                    let payload = dispatched.randomElement(using: &random)!
                    retries.append(Task { await coordinator.pipeline.redeem(payload) })
                case 80..<95:
                    try backend.injectFault(EmulatorFault(endpoint: .redeem, kind: .status, status: 503, count: 1))
                    result.failuresInjected += 1
                default:
                    break
                }
                if Bool.random(using: &random) {  // sometimes one after the other, sometimes all at once
                    for task in triggers { _ = await task.value }
                    for task in retries { _ = await task.value }
                }
            }
            var reports: [RedemptionReport] = []
            var fetches: [Int: FetchSnapshot] = [:]
            for task in triggers {
                let outcome = await task.value
                if let report = outcome.incomingReport { reports.append(report) }
                if let snapshot = outcome.snapshot { fetches[snapshot.sequence] = snapshot }
            }
            for task in retries { reports.append(await task.value) }
            reports.append(contentsOf: fetches.values.compactMap(\.started))
            backend.clearFaults()

            let after = backend.statistics
            let statistics = await coordinator.statistics
            if after.requests(to: .operations) - before.requests(to: .operations) != statistics.fetched {
                result.problems.append(
                    "\(statistics.fetched) fetches but \(after.requests(to: .operations) - before.requests(to: .operations)) fetch requests"
                )
            }
            let sent = reports.filter { $0.code != "duplicate" }.count
            if after.requests(to: .redeem) - before.requests(to: .redeem) != sent {
                result.problems.append(
                    "\(sent) redemptions reported but \(after.requests(to: .redeem) - before.requests(to: .redeem)) redeem requests"
                )
            }
            if let doubled = reports.first(where: { $0.code == "alreadyRedeemed" }) {
                result.problems.append("\(doubled.token) was sent again after this device redeemed it")
            }
            let inProgress = await coordinator.pipeline.inProgressTokens
            if !inProgress.isEmpty { result.problems.append("stuck in progress: \(inProgress.sorted())") }
            for payload in dispatched {
                let token = payload.redeemData.token
                let count = after.redemptions[token] ?? 0
                let succeeded = reports.contains { $0.token == token && $0.code == "redeemed" }
                let state = await coordinator.pipeline.state(of: payload.redeemData.identity)
                if count > 1 || (count == 1) != succeeded || (count == 1) != (state == .redeemed) {
                    result.problems.append(
                        "\(token): redeemed \(count) times at the backend, reported redeemed: \(succeeded), state \(state)"
                    )
                }
                if count == 0,
                    reports.contains(where: { $0.token == token && !["released", "duplicate"].contains($0.code) })
                {
                    result.problems.append("\(token): not redeemed, yet reported otherwise than released")
                }
                result.redeemed += count
            }
            return result
        }
    }
}

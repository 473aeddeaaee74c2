import DeviceSigning
import FetchChannel
import FetchChannelEmulator
import FetchChannelWire
import Foundation

/// A scripted day of triggers replayed through a ``FetchCoordinator`` against the reference
/// backend, on a simulated clock: the fetch requests the backend counted against the minimum the
/// rules allow, computed from the script alone (``TriggerDayScript/minimumRequests(throttleWindowMillis:)``).
///
/// The clock jumps from event to event (the backend runs on the same clock); each fetch takes the
/// script's simulated latency: its answer is held until the clock reaches its end, and triggers
/// in between join it. The run also checks that every pushed operation was redeemed exactly once.
enum TriggerDayBenchmark {
    static let dayStartMillis: Int64 = 1_800_000_000_000 - 1_800_000_000_000 % 86_400_000 + 7 * 3_600_000

    static func row(seed: UInt64 = 0x0DA7_5EED) async throws -> BenchmarkRow {
        let script = TriggerDayScript.make(seed: seed)
        let window = FetchCoordinator.defaultThrottleWindowMillis
        let minimum = script.minimumRequests(throttleWindowMillis: window)

        let clock = ManualWallClock(millis: dayStartMillis)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let key = try P256.Signing.PrivateKey()
        let deviceId = "bench-day-device"
        let registration = FetchRegistration(
            server: backend.baseURL, deviceId: deviceId,
            dispatchTargetId: try backend.registerDispatchTarget(deviceId: deviceId, signatureKey: key.publicKey),
            key: key)
        let registered = Locked(true)
        let fetcher = GatedFetcher(
            RegisteredFetchClient(
                client: FetchClient(clock: clock),
                registrations: {
                    registered.withLock { $0 } ? [registration] : []
                }))
        let coordinator = FetchCoordinator(
            fetcher: fetcher, pipeline: RedemptionPipeline(redeemer: RedemptionClient()),
            policy: .pushOnly, throttleWindowMillis: window, clock: clock)

        var waiting: [Task<TriggerOutcome, Never>] = []
        var current: Task<TriggerOutcome, Never>?
        // A row that fails halfway leaves no fetch held at the gate and no trigger suspended for good.
        defer {
            fetcher.open()
            current?.cancel()
            waiting.forEach { $0.cancel() }
        }
        var heldUntil: Int64?
        var launched = 0
        var pushed: [String] = []
        // Every wait below ends: a coordinator or fetch that never gets there is a failed row, not
        // a bench that hangs.
        let limit = Duration.seconds(60)
        func finish(_ task: Task<TriggerOutcome, Never>) async throws {
            guard await BoundedWait.value(of: task, within: limit) != nil else {
                throw BenchmarkError("a trigger's handling did not end within 60 s")
            }
        }
        func finishHeldFetch() async throws {
            guard let end = heldUntil else { return }
            clock.set(millis: end)
            fetcher.release()
            for task in waiting { try await finish(task) }
            waiting.removeAll()
            heldUntil = nil
        }

        for timed in script.events {
            let now = dayStartMillis + timed.offsetMillis
            if let end = heldUntil, end <= now { try await finishHeldFetch() }
            clock.set(millis: now)
            let trigger: FetchTrigger
            switch timed.event {
            case .deregister:
                registered.withLock { $0 = false }
                continue
            case .register:
                registered.withLock { $0 = true }
                continue
            case .silentDispatch(let channel):
                try backend.dispatch(deviceId: deviceId, channel: channel)
                continue
            case .push:
                let operation = try backend.dispatch(deviceId: deviceId, channel: "firebase-cloud-messaging")
                pushed.append(operation.token)
                trigger = .incoming(
                    .pushNotification,
                    .init(
                        contentType: WireMediaType.json, version: "1",
                        redeemData: .init(token: operation.token, redeemUrl: operation.redeemURL)))
            case .foreground:
                trigger = .foreground
            case .userAction:
                trigger = .userAction
            }
            let fetchedBefore = await coordinator.statistics.fetched
            launched += 1
            let task = Task { await coordinator.handle(trigger) }
            current = task
            // Wait until the coordinator has decided this trigger (a joiner keeps waiting for the fetch).
            var statistics = await coordinator.statistics
            let deadline = ContinuousClock.now + limit
            while statistics.decided < launched {
                guard ContinuousClock.now < deadline else {
                    throw BenchmarkError("the coordinator did not decide trigger \(launched) within 60 s")
                }
                await Task.yield()
                statistics = await coordinator.statistics
            }
            if statistics.fetched > fetchedBefore {
                guard await fetcher.waitUntilHeld(within: limit) else {
                    throw BenchmarkError("the fetch of trigger \(launched) did not get its answer within 60 s")
                }
                guard script.fetchLatenciesMillis.indices.contains(statistics.fetched - 1) else {
                    throw BenchmarkError("the coordinator fetched more often than the script has latencies for")
                }
                heldUntil = now + script.fetchLatenciesMillis[statistics.fetched - 1]
            }
            if heldUntil == nil || timed.event == .push {
                try await finish(task)
            } else {
                waiting.append(task)
            }
            current = nil
        }
        try await finishHeldFetch()

        let counters = backend.statistics
        let requests = counters.requests(to: .operations)
        let exactlyOnce =
            pushed.allSatisfy { counters.redemptions[$0] == 1 } && counters.redemptions.values.allSatisfy { $0 == 1 }
        let counts = script.count
        return BenchmarkRow(
            name: "trigger-day-requests", value: Double(requests),
            unit:
                "fetch requests at the backend over a scripted day (\(counts.foregrounds) foregrounds, \(counts.userActions) user actions, \(counts.pushes) pushes; pushes redeemed once: \(exactlyOnce ? "yes" : "NO")); baseline: the minimum the rules allow, from the script",
            baseline: Double(minimum),
            ratio: Measurement.ratio(Double(requests), over: Double(minimum), rounding: .toNearestOrAwayFromZero),
            target: "= baseline", met: requests == minimum && exactlyOnce)
    }
}

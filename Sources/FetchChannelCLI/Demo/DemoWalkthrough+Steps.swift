import DeviceSigning
import FetchChannel
import FetchChannelEmulator
import FetchChannelWire
import Foundation

/// Steps 5 to 10 of the walkthrough: the fetch practices on the fetched operations.
extension DemoWalkthrough {
    /// 5. A foreground trigger fetches from every backend at once; a local notification for a
    /// token no longer pending is cancelled.
    func fetchOnForeground(
        _ fetcher: RegisteredFetchClient, redeemer: RedemptionClient, healthy: ReferenceBackend
    ) async throws -> (FetchCoordinator, FetchSnapshot) {
        let notifications = InMemoryLocalNotifications(clock: clock)
        let stale = notifications.post(
            token: "token-of-an-operation-that-is-gone", server: healthy.baseURL.absoluteString)
        let observer = FetchCoordinator(
            fetcher: fetcher, pipeline: RedemptionPipeline(redeemer: redeemer),
            policy: .accessibility, notifications: notifications, startsChosenOperation: false, clock: clock)
        let first = await observer.handle(.foreground)
        let snapshot = try Self.require(first.snapshot, "the foreground trigger did not fetch")
        step(
            5,
            "App came to the foreground -> \(first.reason.rawValue): \(snapshot.operations.count) operations, "
                + "\(snapshot.errors.count) errors.")
        for operation in snapshot.operations {
            let channel = operation.dispatchChannel.wireValue.padding(toLength: 25, withPad: " ", startingAt: 0)
            say("   \(Self.time(operation.creationTimeInEpochMillis))  \(channel) \(Self.short(operation.token))")
        }
        let cancelled = snapshot.cancelledNotifications.map(\.identifier) == [stale.identifier]
        say("   Local notification for a token no longer pending was cancelled: \(cancelled ? "yes" : "no").")
        return (observer, snapshot)
    }

    /// 6. A user action a second later is throttled: the cached result, no request.
    func showThrottling(_ observer: FetchCoordinator, healthy: ReferenceBackend) async {
        clock.advance(byMillis: 1_000)
        let requestsBefore = healthy.statistics.requests(to: .operations)
        let second = await observer.handle(.userAction)
        let requests = healthy.statistics.requests(to: .operations) - requestsBefore
        step(
            6,
            "User pulled to refresh 1 s later -> \(second.reason.rawValue): the cached result, \(requests) new "
                + "requests (window: 5 s).")
    }

    /// 7. The two channel policies pick different operations.
    func showChannelPolicies(_ snapshot: FetchSnapshot) {
        step(7, "Channel policy decides what to start (the latest eligible operation):")
        for (name, policy) in [
            ("   .pushOnly       -> ", ChannelPolicy.pushOnly), ("   .accessibility  -> ", .accessibility),
        ] {
            let chosen = OperationSelection.eligible(snapshot.operations, policy: policy, states: [:]).last
            say(name + (chosen.map { "\($0.dispatchChannel.wireValue) \(Self.short($0.token))" } ?? "nothing"))
        }
    }

    /// 8. A push for the operation a fetch is about to start: redeemed exactly once.
    func showPushDuringFetch(
        _ push: DispatchedOperation, fetcher: RegisteredFetchClient, pipeline: RedemptionPipeline,
        healthy: ReferenceBackend
    ) async {
        let starter = FetchCoordinator(fetcher: fetcher, pipeline: pipeline, policy: .pushOnly, clock: clock)
        let payload = PendingOutOfBandOperation.Payload(
            contentType: WireMediaType.json, version: "1",
            redeemData: .init(token: push.token, redeemUrl: push.redeemURL))
        // The fetch first: a push that is already being redeemed keeps a fetch from starting.
        let fetched = Task { await starter.handle(.foreground) }
        while await starter.statistics.decided == 0 { await Task.yield() }
        let pushOutcome = await starter.handle(.incoming(.pushNotification, payload))
        let fetchOutcome = await fetched.value
        step(
            8,
            "A push for \(Self.short(push.token)) arrived while a fetch was returning it (one pipeline, "
                + "(origin, token) = identity):")
        say("   push  -> \(pushOutcome.incomingReport.map { "\($0.code) \(Self.short($0.token))" } ?? "-")")
        let started = fetchOutcome.snapshot?.started.map { "\($0.code) \(Self.short($0.token))" }
        say("   fetch -> \(started ?? "started nothing: the push was already redeeming it")")
        say("   The backend redeemed it \(healthy.statistics.redemptions[push.token] ?? 0) time(s).")
    }

    /// 9. A redemption that fails is released and can be retried; returns the retry's report.
    func showReleasedRedemption(
        of qr: DispatchedOperation, in snapshot: FetchSnapshot, pipeline: RedemptionPipeline,
        healthy: ReferenceBackend
    ) async throws -> RedemptionReport {
        try healthy.injectFault(EmulatorFault(endpoint: .redeem, kind: .status, status: 503, count: 1))
        let qrOperation = try Self.require(
            snapshot.operations.first { $0.token == qr.token }, "the QR operation was not fetched")
        let failed = await pipeline.redeem(qrOperation)
        let retried = await pipeline.redeem(qrOperation)
        step(
            9,
            "Redeeming the QR operation while the backend answers 503 -> \(failed.code); tried again -> "
                + "\(retried.code).")
        return retried
    }

    /// 10. Clock skew and the down backend, in the same partial result; the walkthrough fails when
    /// any step did not go as it should.
    func showErrors(
        of snapshot: FetchSnapshot, push: DispatchedOperation, retried: RedemptionReport, healthy: ReferenceBackend
    ) throws {
        step(10, "The same fetch reported, beside the healthy backend's operations:")
        for error in snapshot.errors {
            let kind =
                (error.networkFailure?.kind.rawValue ?? error.invalidResponse?.kind.rawValue).map { " (\($0))" } ?? ""
            say("   \(error.code)\(kind) from \(error.server ?? "-")")
            if let offset = error.measuredOffsetMillis {
                say("     measured offset: \(offset) ms, tolerance: \(error.toleranceMillis ?? 0) ms")
            }
            say("     \(error.message)")
        }
        let codes = snapshot.errors.map(\.code)
        let kinds = snapshot.errors.compactMap(\.networkFailure?.kind)
        guard codes.contains("clockSkewTooBig"), kinds.contains(.connectionRefused), kinds.contains(.tlsPinMismatch),
            snapshot.operations.count == 3,
            healthy.statistics.redemptions[push.token] == 1, retried.code == "redeemed"
        else {
            throw CLIFailure(
                .unexpectedOutcome,
                "the demo did not go as expected: errors \(codes), \(snapshot.operations.count) operations")
        }
    }
}

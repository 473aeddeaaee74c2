import DeviceSigning
import FetchChannel
import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

extension Practices {
    /// The coordinator and the pipeline with the real fetch and redemption clients against the
    /// reference backend (in-process, loopback, on the test's clock): the backend's own counters
    /// say how many requests were made and how often each token was redeemed.
    @Suite(.dedicatedThread) struct CoordinatorAgainstReferenceBackendTests {
        /// A fetch is decided first; then 999 mixed triggers, the pushes for an operation it
        /// returns among them: one request, and that operation redeemed once.
        @Test func aThousandMixedTriggersInOneThrottleWindowMakeOneRequest() async throws {
            let device = try ReferenceDevice()
            defer { device.backend.stop() }
            let pushed = try device.dispatch(.pushNotification)
            let coordinator = device.coordinator()
            let first = Task { await coordinator.handle(.foreground) }
            #expect(await Practices.eventually { await coordinator.statistics.decided == 1 })
            let others = await withTaskGroup(of: TriggerOutcome.self) { group in
                for index in 1..<1_000 {
                    let trigger: FetchTrigger =
                        switch index % 3 {
                        case 0: .foreground
                        case 1: .userAction
                        default: .incoming(.pushNotification, pushed)
                        }
                    group.addTask { await coordinator.handle(trigger) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let outcomes = [await first.value] + others
            let counters = device.backend.statistics
            #expect(counters.requests(to: .operations) == 1)
            let snapshots = outcomes.compactMap(\.snapshot)
            #expect(snapshots.count == 667)
            #expect(Set(snapshots).count == 1, "every caller gets the same result")
            #expect(snapshots.first?.errors == [])
            #expect(outcomes.filter { $0.reason == .fetched }.count == 1)
            // The pushed operation, delivered 333 times and also fetched, is redeemed once.
            #expect(counters.redemptions[pushed.redeemData.token] == 1)
            #expect(counters.requests(to: .redeem) == 1)
        }

        @Test func withoutARegisteredUserTheBackendSeesNoRequest() async throws {
            let device = try ReferenceDevice()
            defer { device.backend.stop() }
            try device.dispatch(.pushNotification)
            let coordinator = device.coordinator(fetcher: device.fetcher(registered: false))
            for trigger in [FetchTrigger.foreground, .userAction, .foreground] {
                #expect(await coordinator.handle(trigger) == .noRegistration)
                device.clock.advance(byMillis: 10_000)
            }
            #expect(device.backend.statistics.requests == [:])
        }

        enum PushTiming: String, CaseIterable {
            /// The push's redemption finishes while the fetch's answer (holding T) is on its way.
            case pushRedeemedBeforeTheFetchReturns
            /// The push's redemption is under way (held before sending) when the fetch returns T.
            case pushRedeemingWhenTheFetchReturns
            /// The fetch returned T and started it (held before sending) when the push arrives.
            case pushArrivesWhileTheFetchStartsT
        }

        @Test(arguments: PushTiming.allCases)
        func anIncomingPushForATokenAFetchReturnsIsRedeemedOnce(timing: PushTiming) async throws {
            let device = try ReferenceDevice()
            defer { device.backend.stop() }
            let t = try device.dispatch(.pushNotification)
            let fetchHold = Hold()
            let redeemHold = Hold()
            let holdRedemptions = timing != .pushRedeemedBeforeTheFetchReturns
            let redeemer: any OperationRedeeming =
                holdRedemptions ? HeldRedeemer(inner: RedemptionClient(), hold: redeemHold) : RedemptionClient()
            let coordinator = device.coordinator(
                fetcher: HeldFetcher(inner: device.fetcher(), hold: fetchHold), redeemer: redeemer)

            let fetch = Task { await coordinator.handle(.foreground) }
            await fetchHold.waitUntilHeld()  // the backend has answered with T
            let push: TriggerOutcome
            switch timing {
            case .pushRedeemedBeforeTheFetchReturns:
                push = await coordinator.handle(.incoming(.pushNotification, t))
                fetchHold.releaseAll()
            case .pushRedeemingWhenTheFetchReturns:
                let pushTask = Task { await coordinator.handle(.incoming(.pushNotification, t)) }
                await redeemHold.waitUntilHeld()
                fetchHold.releaseAll()
                // The fetch ends without a redemption of its own (a second held one would be a bug).
                #expect(await Practices.eventually { await coordinator.latestFetch != nil || redeemHold.heldCount > 1 })
                redeemHold.releaseAll()
                push = await pushTask.value
            case .pushArrivesWhileTheFetchStartsT:
                fetchHold.releaseAll()
                await redeemHold.waitUntilHeld()
                let pushDone = Locked(false)
                let pushTask = Task {
                    let outcome = await coordinator.handle(.incoming(.pushNotification, t))
                    pushDone.withLock { $0 = true }
                    return outcome
                }
                // The push is a duplicate at once; a second held redemption would be a bug.
                #expect(await Practices.eventually { pushDone.withLock { $0 } || redeemHold.heldCount > 1 })
                #expect(redeemHold.heldCount == 1)
                redeemHold.releaseAll()
                push = await pushTask.value
                #expect(
                    push
                        == .incomingRedeemedDirectly(.duplicate(identity: t.redeemData.identity, state: .inProgress)))
            }
            let snapshot = try #require(await fetch.value.snapshot)
            #expect(snapshot.operations.map(\.token) == [t.redeemData.token], "the fetch returned T")
            let reports = [push.incomingReport, snapshot.started].compactMap { $0 }
            #expect(reports.filter { $0.code == "redeemed" }.count == 1, "\(reports)")
            #expect(device.backend.statistics.redemptions[t.redeemData.token] == 1)
            #expect(device.backend.statistics.requests(to: .redeem) == 1)
            #expect(await coordinator.pipeline.inProgressTokens.isEmpty)
        }

        @Test(arguments: ChannelPolicy.allCases)
        func eachPolicyStartsTheLatestOperationItAdmits(policy: ChannelPolicy) async throws {
            let device = try ReferenceDevice()
            defer { device.backend.stop() }
            let push = try device.dispatch(.pushNotification)
            let link = try device.dispatch(.link)
            let qr = try device.dispatch(.qrCode)
            try device.dispatch(.other("sms"))
            let coordinator = device.coordinator(policy: policy)
            let snapshot = try #require(await coordinator.handle(.foreground).snapshot)
            #expect(snapshot.operations.count == 4)
            let expected = policy == .pushOnly ? [push] : [push, link, qr]
            #expect(snapshot.eligible.map(\.token) == expected.map(\.redeemData.token))
            #expect(snapshot.started?.code == "redeemed")
            let chosen = try #require(expected.last).redeemData.token
            #expect(snapshot.started?.token == chosen)
            #expect(device.backend.statistics.redemptions == [chosen: 1])
        }

        @Test func reconciliationCancelsExactlyTheStaleNotifications() async throws {
            let device = try ReferenceDevice()
            defer { device.backend.stop() }
            let server = device.registration.serverName
            let notifications = InMemoryLocalNotifications(clock: device.clock)
            let pending = try device.dispatch(.link)
            let redeemedElsewhere = try device.dispatch(.pushNotification)
            let expiring = try device.dispatch(.pushNotification, lifetimeSeconds: 1)
            let keep = notifications.post(token: pending.redeemData.token, server: server)
            let gone = notifications.post(token: redeemedElsewhere.redeemData.token, server: server)
            let expired = notifications.post(token: expiring.redeemData.token)
            _ = await RedemptionClient().redeem(redeemedElsewhere)  // e.g. on another of the user's devices
            device.clock.advance(byMillis: 2_000)

            let coordinator = device.coordinator(notifications: notifications)
            let snapshot = try #require(await coordinator.handle(.foreground).snapshot)
            #expect(snapshot.operations.map(\.token) == [pending.redeemData.token])
            #expect(Set(snapshot.cancelledNotifications) == [gone, expired])
            #expect(notifications.shown == [keep])
            #expect(snapshot.started == nil, "pushOnly does not start the link operation")
        }

        @Test func aRedemptionTheBackendFailsIsReleasedAndTheNextFetchRedeemsIt() async throws {
            let device = try ReferenceDevice()
            defer { device.backend.stop() }
            let t = try device.dispatch(.pushNotification)
            try device.backend.injectFault(EmulatorFault(endpoint: .redeem, kind: .status, status: 503, count: 1))
            let coordinator = device.coordinator()
            let push = await coordinator.handle(.incoming(.pushNotification, t))
            #expect(push.incomingReport?.code == "released")
            #expect(await coordinator.pipeline.state(of: t.redeemData.identity) == .unseen)
            let first = try #require(await coordinator.handle(.userAction).snapshot)
            #expect(first.started?.code == "redeemed" && first.started?.token == t.redeemData.token)
            #expect(device.backend.statistics.redemptions[t.redeemData.token] == 1)
            #expect(device.backend.statistics.requests(to: .redeem) == 2)
        }

        @Test func anExpiredOperationIsDroppedAndReported() async throws {
            let device = try ReferenceDevice()
            defer { device.backend.stop() }
            let t = try device.dispatch(.pushNotification, lifetimeSeconds: 1)
            device.clock.advance(byMillis: 2_000)
            let coordinator = device.coordinator()
            let report = try #require(await coordinator.handle(.incoming(.pushNotification, t)).incomingReport)
            guard case .expired(let identity, let error) = report else {
                Issue.record("expected expired, got \(report)")
                return
            }
            #expect(identity == t.redeemData.identity && error.code == "tokenExpired")
            #expect(await coordinator.pipeline.state(of: identity) == .unseen)
            #expect(device.backend.statistics.redemptions[identity.token] == nil)
        }

        @Test func theResultKeepsABackendsClockSkewError() async throws {
            let clock = ManualWallClock(millis: ReferenceDevice.startMillis)
            let healthyBackend = try ReferenceBackend.start(.init(clock: clock))
            defer { healthyBackend.stop() }
            let healthy = try ReferenceDevice(
                backend: healthyBackend, clock: clock, key: try P256.Signing.PrivateKey(), deviceId: "device-skew")
            let skewedBackend = try ReferenceBackend.start(.init(clock: clock, clockOffsetMillis: 600_000))
            defer { skewedBackend.stop() }
            let skewed = try ReferenceDevice(
                backend: skewedBackend, clock: clock, key: healthy.key, deviceId: healthy.deviceId)
            let t = try healthy.dispatch(.pushNotification)
            let fetcher = RegisteredFetchClient(
                client: FetchClient(clock: clock), registrations: [healthy.registration, skewed.registration])
            let snapshot = try #require(await healthy.coordinator(fetcher: fetcher).handle(.foreground).snapshot)
            #expect(snapshot.operations.map(\.token) == [t.redeemData.token])
            #expect(snapshot.errors.map(\.code) == ["clockSkewTooBig"])
            #expect(snapshot.errors.first?.server == skewed.registration.serverName)
            #expect(snapshot.started?.code == "redeemed")
        }
    }
}

import DeviceSigning
import Foundation
import Testing

@testable import FetchChannel

extension Practices {
    /// The coordinator's rules over a scripted fetcher and redeemer; the same rules against the
    /// reference backend are in ``CoordinatorAgainstReferenceBackendTests``.
    @Suite struct FetchCoordinatorTests {
        static let start: Int64 = 1_750_000_000_000

        func coordinator(
            _ fetcher: ScriptedFetcher, redeemer: any OperationRedeeming = ImmediateRedeemer(),
            policy: ChannelPolicy = .pushOnly, notifications: (any LocalNotifications)? = nil,
            startsChosenOperation: Bool = true, clock: ManualWallClock
        ) -> FetchCoordinator {
            FetchCoordinator(
                fetcher: fetcher, pipeline: RedemptionPipeline(redeemer: redeemer), policy: policy,
                notifications: notifications, startsChosenOperation: startsChosenOperation, clock: clock)
        }

        @Test func withoutARegistrationNothingIsFetched() async {
            let fetcher = ScriptedFetcher(operations: [Practices.operation("t1", created: 1)])
            fetcher.registered = false
            let coordinator = coordinator(fetcher, clock: ManualWallClock(millis: Self.start))
            #expect(await coordinator.handle(.foreground) == .noRegistration)
            #expect(await coordinator.handle(.userAction) == .noRegistration)
            #expect(fetcher.calls == 0)
            #expect(await coordinator.statistics.noRegistration == 2)
        }

        @Test func aTriggerInsideTheThrottleWindowGetsTheCachedResult() async throws {
            let clock = ManualWallClock(millis: Self.start)
            let fetcher = ScriptedFetcher()
            let coordinator = coordinator(fetcher, clock: clock)
            let first = try #require(await coordinator.handle(.foreground).snapshot)
            #expect(first.completedAtMillis == Self.start)
            clock.advance(byMillis: FetchCoordinator.defaultThrottleWindowMillis - 1)
            #expect(await coordinator.handle(.userAction) == .throttled(first))
            clock.advance(byMillis: 1)
            let second = await coordinator.handle(.userAction)
            #expect(second.reason == .fetched && second.snapshot?.sequence == 2)
            #expect(fetcher.calls == 2)
        }

        @Test func aClockThatWentBackDoesNotThrottle() async {
            let clock = ManualWallClock(millis: Self.start)
            let fetcher = ScriptedFetcher()
            let coordinator = coordinator(fetcher, clock: clock)
            _ = await coordinator.handle(.foreground)
            clock.advance(byMillis: -60_000)
            #expect(await coordinator.handle(.foreground).reason == .fetched)
            #expect(fetcher.calls == 2)
        }

        @Test func concurrentTriggersShareTheFetchUnderWay() async throws {
            let fetcher = ScriptedFetcher(gated: true, operations: [Practices.operation("t1", created: 1)])
            let coordinator = coordinator(fetcher, clock: ManualWallClock(millis: Self.start))
            let first = Task { await coordinator.handle(.foreground) }
            await fetcher.waitForHeld()
            let joiners = (0..<50).map { index in
                Task { await coordinator.handle(index % 2 == 0 ? .userAction : .foreground) }
            }
            #expect(await Practices.eventually { await coordinator.statistics.decided == 51 })
            #expect(await coordinator.statistics.joinedInFlight == 50)
            #expect(await coordinator.isFetching)
            fetcher.releaseAll()
            let snapshot = try #require(await first.value.snapshot)
            for joiner in joiners { #expect(await joiner.value == .joinedInFlight(snapshot)) }
            #expect(await first.value == .fetched(snapshot))
            #expect(fetcher.calls == 1 && fetcher.overlaps == 0)
            #expect(await !coordinator.isFetching)
        }

        @Test func anIncomingOperationGoesStraightToThePipelineWithoutAFetch() async {
            let fetcher = ScriptedFetcher()
            fetcher.registered = false  // a registration QR code arrives before any registration
            let redeemer = ImmediateRedeemer()
            let coordinator = coordinator(fetcher, redeemer: redeemer, clock: ManualWallClock(millis: Self.start))
            let outcome = await coordinator.handle(.incoming(.qrCode, Practices.payload("t1")))
            #expect(
                outcome
                    == .incomingRedeemedDirectly(.redeemed(identity: .onBackend("t1"), operation: Practices.answer)))
            #expect(
                await coordinator.handle(.incoming(.pushNotification, Practices.payload("t1")))
                    == .incomingRedeemedDirectly(.duplicate(identity: .onBackend("t1"), state: .redeemed)))
            #expect(fetcher.calls == 0 && redeemer.calls("t1") == 1)
        }

        @Test func theLatestEligibleOperationIsStartedAndTheFilteredListExposed() async throws {
            let operations = [
                Practices.operation("old", created: 10), Practices.operation("done", created: 20),
                Practices.operation("latest", created: 30), Practices.operation("qr", created: 40, channel: .qrCode),
            ]
            let fetcher = ScriptedFetcher(operations: operations)
            let redeemer = ImmediateRedeemer()
            let coordinator = coordinator(fetcher, redeemer: redeemer, clock: ManualWallClock(millis: Self.start))
            _ = await coordinator.pipeline.redeem(Practices.payload("done"))
            let snapshot = try #require(await coordinator.handle(.foreground).snapshot)
            #expect(snapshot.operations == operations)
            #expect(snapshot.eligible.map(\.token) == ["old", "latest"])
            #expect(snapshot.chosen?.token == "latest")
            #expect(snapshot.started == .redeemed(identity: .onBackend("latest"), operation: Practices.answer))
            #expect(redeemer.calls("old") == 0 && redeemer.calls("qr") == 0)
        }

        @Test func anAppThatStartsOperationsItselfGetsTheChoiceOnly() async throws {
            let fetcher = ScriptedFetcher(operations: [Practices.operation("t1", created: 10)])
            let redeemer = ImmediateRedeemer()
            let coordinator = coordinator(
                fetcher, redeemer: redeemer, startsChosenOperation: false,
                clock: ManualWallClock(millis: Self.start))
            let snapshot = try #require(await coordinator.handle(.foreground).snapshot)
            #expect(snapshot.chosen?.token == "t1" && snapshot.started == nil)
            #expect(redeemer.totalCalls == 0)
        }

        /// Both policies over the same mix of channels.
        @Test(arguments: [
            (ChannelPolicy.pushOnly, ["push-1", "push-2"], "push-2"),
            (ChannelPolicy.accessibility, ["push-1", "link", "push-2", "qr"], "qr"),
        ])
        func eachPolicyStartsOnlyWhatItAdmits(policy: ChannelPolicy, eligible: [String], chosen: String) async throws {
            let operations = [
                Practices.operation("push-1", created: 1), Practices.operation("link", created: 2, channel: .link),
                Practices.operation("push-2", created: 3), Practices.operation("qr", created: 4, channel: .qrCode),
                Practices.operation("sms", created: 5, channel: .other("sms")),
            ]
            let redeemer = ImmediateRedeemer()
            let coordinator = coordinator(
                ScriptedFetcher(operations: operations), redeemer: redeemer, policy: policy,
                clock: ManualWallClock(millis: Self.start))
            let snapshot = try #require(await coordinator.handle(.userAction).snapshot)
            #expect(snapshot.policy == policy)
            #expect(snapshot.eligible.map(\.token) == eligible)
            #expect(snapshot.started?.token == chosen)
            #expect(redeemer.totalCalls == 1 && redeemer.calls(chosen) == 1)
        }

        /// The push that arrives during the fetch is kept, also when the clock was set back
        /// meanwhile so that it reads as posted before the fetch started.
        @Test(arguments: [Int64(10), -60_000])
        func reconciliationCancelsExactlyTheStaleNotifications(clockStepDuringFetch: Int64) async throws {
            let clock = ManualWallClock(millis: Self.start)
            let notifications = InMemoryLocalNotifications(clock: clock)
            let down = "https://down.example"
            let pending = notifications.post(token: "pending", server: Practices.server)
            let stale = notifications.post(token: "stale", server: Practices.server)
            let staleNoServer = notifications.post(token: "stale-anywhere")
            let onFailedBackend = notifications.post(token: "unknown-fate", server: down)
            let fetcher = ScriptedFetcher(
                gated: true, operations: [Practices.operation("pending", created: 1)],
                errors: [.networkError(server: down, cause: NetworkFailure(.connectionRefused, detail: ""))])
            let coordinator = coordinator(fetcher, notifications: notifications, clock: clock)
            let fetch = Task { await coordinator.handle(.foreground) }
            await fetcher.waitForHeld()
            clock.advance(byMillis: clockStepDuringFetch)
            let newer = notifications.post(token: "newer-push", server: Practices.server)  // after the fetch started
            fetcher.releaseAll()
            let snapshot = try #require(await fetch.value.snapshot)
            #expect(snapshot.cancelledNotifications == [stale])
            #expect(notifications.cancelled == [stale])
            #expect(notifications.shown == [pending, staleNoServer, onFailedBackend, newer])

            // A later fetch where every backend answers: the notification without a server goes too.
            fetcher.set(operations: [
                Practices.operation("pending", created: 1), Practices.operation("newer-push", created: 2),
            ])
            clock.advance(byMillis: max(0, -clockStepDuringFetch) + FetchCoordinator.defaultThrottleWindowMillis)
            let second = Task { await coordinator.handle(.userAction) }
            await fetcher.waitForHeld()
            fetcher.releaseAll()
            #expect(
                try #require(await second.value.snapshot).cancelledNotifications == [staleNoServer, onFailedBackend])
            #expect(notifications.shown == [pending, newer])
        }

        /// A stale notification the app removed itself while the fetch was under way is not
        /// reported as cancelled by the fetch.
        @Test func aNotificationRemovedDuringTheFetchIsNotReportedCancelled() async throws {
            let clock = ManualWallClock(millis: Self.start)
            let notifications = InMemoryLocalNotifications(clock: clock)
            let gone = notifications.post(token: "gone", server: Practices.server)
            let stale = notifications.post(token: "stale", server: Practices.server)
            let fetcher = ScriptedFetcher(gated: true)
            let coordinator = coordinator(fetcher, notifications: notifications, clock: clock)
            let fetch = Task { await coordinator.handle(.foreground) }
            await fetcher.waitForHeld()
            await notifications.cancel(identifiers: [gone.identifier])  // the person dismissed it
            fetcher.releaseAll()
            #expect(try #require(await fetch.value.snapshot).cancelledNotifications == [stale])
            #expect(notifications.cancelled == [gone, stale])
        }

        /// An identifier posted again during the fetch, for a newer push, is not cancelled with
        /// the stale notification it used to name.
        @Test func anIdentifierPostedAgainDuringTheFetchIsKept() async throws {
            let clock = ManualWallClock(millis: Self.start)
            let notifications = InMemoryLocalNotifications(clock: clock)
            notifications.post(token: "old", server: Practices.server, identifier: "n1")
            let fetcher = ScriptedFetcher(gated: true)
            let coordinator = coordinator(fetcher, notifications: notifications, clock: clock)
            let fetch = Task { await coordinator.handle(.foreground) }
            await fetcher.waitForHeld()
            let newer = notifications.post(token: "new", server: Practices.server, identifier: "n1")
            fetcher.releaseAll()
            #expect(try #require(await fetch.value.snapshot).cancelledNotifications.isEmpty)
            #expect(notifications.shown.contains(newer))
        }

        /// A platform that stamps a notification's time anew on each read (a scheduled one has no
        /// date) still has its stale notifications cancelled.
        @Test func aNotificationWhoseTimeChangesBetweenReadsIsStillCancelled() async throws {
            let clock = ManualWallClock(millis: Self.start)
            let notifications = RestampingNotifications(clock: clock, token: "stale")
            let coordinator = coordinator(ScriptedFetcher(), notifications: notifications, clock: clock)
            let snapshot = try #require(await coordinator.handle(.foreground).snapshot)
            #expect(snapshot.cancelledNotifications.map(\.identifier) == ["scheduled"])
            #expect(notifications.cancelledIdentifiers == ["scheduled"])
        }

        /// While a push's operation is being redeemed, a foreground trigger does not fetch: the
        /// fetch could start an older operation beside it. Once it is done, the next one fetches.
        @Test func noFetchWhileAnIncomingOperationIsBeingStarted() async throws {
            let fetcher = ScriptedFetcher(operations: [Practices.operation("W", created: 1)])
            let redeemer = GatedRedeemer()
            let coordinator = coordinator(
                fetcher, redeemer: redeemer, startsChosenOperation: false, clock: ManualWallClock(millis: Self.start))
            let push = Task { await coordinator.handle(.incoming(.pushNotification, Practices.payload("T"))) }
            await redeemer.waitForWaiting(1)
            #expect(await coordinator.handle(.foreground) == .incomingUnderWay)
            #expect(await coordinator.handle(.userAction) == .incomingUnderWay)
            #expect(fetcher.calls == 0)
            #expect(await coordinator.statistics.incomingUnderWay == 2)
            redeemer.resolve("T", succeed: true)
            #expect(await push.value.incomingReport?.code == "redeemed")
            let outcome = await coordinator.handle(.foreground)
            #expect(outcome.reason == .fetched && fetcher.calls == 1)
            #expect(await coordinator.statistics.decided == 4)
        }

        /// A push arrives while a fetch is under way; the fetch returns an older operation W beside
        /// the push's T. The fetch starts nothing, whether T is still being redeemed when the
        /// answer comes (one operation at a time) or was redeemed already (the person is in T's
        /// flow; W used to be started right after it, the pipeline being idle by then).
        @Test(arguments: [false, true])
        func aFetchStartsNothingBesideOrAfterAPushedOperation(pushFinishesFirst: Bool) async throws {
            let fetcher = ScriptedFetcher(
                gated: true, operations: [Practices.operation("W", created: 1), Practices.operation("T", created: 2)])
            let redeemer = GatedRedeemer()
            let coordinator = coordinator(fetcher, redeemer: redeemer, clock: ManualWallClock(millis: Self.start))
            let fetch = Task { await coordinator.handle(.foreground) }
            await fetcher.waitForHeld()
            let push = Task { await coordinator.handle(.incoming(.pushNotification, Practices.payload("T"))) }
            await redeemer.waitForWaiting(1)
            if pushFinishesFirst {
                redeemer.resolve("T", succeed: true)
                #expect(await push.value.incomingReport?.code == "redeemed")
            }
            fetcher.releaseAll()
            // The fetch returns, or (wrongly) starts W; either ends this wait.
            #expect(
                await Practices.eventually { await !coordinator.isFetching || redeemer.waitingTokens.contains("W") })
            #expect(!redeemer.waitingTokens.contains("W"), "the fetch started W beside or after the pushed T")
            redeemer.resolve("W", succeed: true)  // frees a W started wrongly, so the test ends either way
            let snapshot = try #require(await fetch.value.snapshot)
            #expect(snapshot.eligible.map(\.token) == ["W"])
            #expect(snapshot.started == nil)
            if !pushFinishesFirst {
                redeemer.resolve("T", succeed: true)
                #expect(await push.value.incomingReport?.code == "redeemed")
            }
            #expect(redeemer.calls("W") == 0 && redeemer.calls("T") == 1)
            #expect(redeemer.violations.isEmpty)
        }

        /// The app redeems an operation through the pipeline itself while a fetch is under way,
        /// which the coordinator does not see: the fetch does not start the older one after it.
        @Test func aFetchStartsNothingAfterAnOperationTheAppStartedMeanwhile() async throws {
            let fetcher = ScriptedFetcher(
                gated: true, operations: [Practices.operation("W", created: 1), Practices.operation("T", created: 2)])
            let redeemer = ImmediateRedeemer()
            let pipeline = RedemptionPipeline(redeemer: redeemer)
            let coordinator = FetchCoordinator(
                fetcher: fetcher, pipeline: pipeline, policy: .pushOnly, clock: ManualWallClock(millis: Self.start))
            let fetch = Task { await coordinator.handle(.foreground) }
            await fetcher.waitForHeld()
            #expect(await pipeline.redeem(Practices.operation("T", created: 2)).code == "redeemed")
            fetcher.releaseAll()
            let snapshot = try #require(await fetch.value.snapshot)
            #expect(snapshot.eligible.map(\.token) == ["W"])
            #expect(snapshot.started == nil, "W was started right after T")
            #expect(redeemer.calls("W") == 0)
            // With nothing begun meanwhile, the next fetch starts W as usual.
            let later = FetchCoordinator(
                fetcher: ScriptedFetcher(operations: [Practices.operation("W", created: 1)]), pipeline: pipeline,
                policy: .pushOnly, clock: ManualWallClock(millis: Self.start))
            #expect(try #require(await later.handle(.foreground).snapshot).started?.code == "redeemed")
        }

        /// The app's own redemption was under way as the fetch was decided and ended while the
        /// fetch ran: the pipeline is idle again and no redemption began meanwhile, yet the person
        /// is in that operation's flow, so the older chosen one must not follow it.
        @Test func aFetchStartsNothingAfterAnOperationTheAppWasRedeemingAsItBegan() async throws {
            let fetcher = ScriptedFetcher(gated: true, operations: [Practices.operation("W", created: 1)])
            let gated = GatedRedeemer()
            let immediate = ImmediateRedeemer()
            // T waits for the test; W, were it wrongly started, is answered at once (no hang).
            let pipeline = RedemptionPipeline(
                redeemer: TokenRoutedRedeemer(gated: gated, gatedToken: "T", others: immediate))
            let coordinator = FetchCoordinator(
                fetcher: fetcher, pipeline: pipeline, policy: .pushOnly, clock: ManualWallClock(millis: Self.start))
            let push = Task { await pipeline.redeem(Practices.operation("T", created: 2)) }
            await gated.waitForWaiting(1)
            let fetch = Task { await coordinator.handle(.foreground) }
            await fetcher.waitForHeld()
            #expect(gated.resolve("T", succeed: true))
            #expect(await push.value.code == "redeemed")
            fetcher.releaseAll()
            let snapshot = try #require(await fetch.value.snapshot)
            #expect(snapshot.eligible.map(\.token) == ["W"])
            #expect(snapshot.started == nil, "W was started right after T")
            #expect(immediate.calls("W") == 0)
        }

        /// `gatedToken` goes to `gated`, every other token to `others`.
        struct TokenRoutedRedeemer: OperationRedeeming {
            let gated: GatedRedeemer
            let gatedToken: String
            let others: ImmediateRedeemer

            func redeem(_ payload: PendingOutOfBandOperation.Payload) async -> RedemptionResult {
                payload.redeemData.token == gatedToken ? await gated.redeem(payload) : await others.redeem(payload)
            }
        }

        /// Notifications whose first read waits until released, to hold a fetch before its request.
        final class HeldNotifications: LocalNotifications {
            private struct State {
                var waiter: CheckedContinuation<Void, Never>?
                var isHeld = false
                var released = false
            }
            private let state = Locked(State())

            func current() async -> [LocalNotification] {
                await withCheckedContinuation { continuation in
                    let goOn = state.withLock { state -> Bool in
                        guard !state.released else { return true }
                        state.isHeld = true
                        state.waiter = continuation
                        return false
                    }
                    if goOn { continuation.resume() }
                }
                return []
            }

            func cancel(identifiers: [String]) async {}

            var isHeld: Bool { state.withLock { $0.isHeld } }

            func release() {
                let waiter = state.withLock { state in
                    state.released = true
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume()
            }
        }

        /// The same before the request is sent: the app's redemption begins and ends while the
        /// fetch reads the notifications, the first thing it does.
        @Test func aFetchStartsNothingAfterAnOperationTheAppStartedBeforeItsRequest() async throws {
            let fetcher = ScriptedFetcher(
                operations: [Practices.operation("W", created: 1), Practices.operation("T", created: 2)])
            let redeemer = ImmediateRedeemer()
            let pipeline = RedemptionPipeline(redeemer: redeemer)
            let notifications = HeldNotifications()
            let coordinator = FetchCoordinator(
                fetcher: fetcher, pipeline: pipeline, policy: .pushOnly, notifications: notifications,
                clock: ManualWallClock(millis: Self.start))
            let fetch = Task { await coordinator.handle(.foreground) }
            #expect(await Practices.eventually { notifications.isHeld })
            #expect(await pipeline.redeem(Practices.operation("T", created: 2)).code == "redeemed")
            notifications.release()
            let snapshot = try #require(await fetch.value.snapshot)
            #expect(snapshot.started == nil, "W was started right after T")
            #expect(redeemer.calls("W") == 0)
        }

        /// A backend that still lists an operation it called expired: the next fetch starts the
        /// older one instead of trying the expired one again.
        @Test func anOperationTheBackendCalledExpiredIsNotChosenAgain() async throws {
            let clock = ManualWallClock(millis: Self.start)
            let fetcher = ScriptedFetcher(operations: [
                Practices.operation("older", created: 1), Practices.operation("expired", created: 2),
            ])
            let redeemer = ImmediateRedeemer { token, _ in
                token == "expired" ? .failure(Practices.expired) : .success(Practices.answer)
            }
            let coordinator = coordinator(fetcher, redeemer: redeemer, clock: clock)
            let first = try #require(await coordinator.handle(.foreground).snapshot)
            #expect(first.started?.code == "expired")
            clock.advance(byMillis: FetchCoordinator.defaultThrottleWindowMillis)
            let second = try #require(await coordinator.handle(.foreground).snapshot)
            #expect(second.eligible.map(\.token) == ["older"])
            #expect(second.started?.code == "redeemed" && second.started?.token == "older")
            #expect(redeemer.calls("expired") == 1)
        }

        /// The throttle's arithmetic never traps, whatever an injected clock reads.
        @Test func clockReadingsAtTheEndsOfInt64DoNotTrap() async {
            let clock = ManualWallClock(millis: .max)
            let fetcher = ScriptedFetcher()
            let coordinator = coordinator(fetcher, clock: clock)
            #expect(await coordinator.handle(.foreground).reason == .fetched)
            clock.set(millis: .min)
            #expect(await coordinator.handle(.foreground).reason == .fetched)
            clock.set(millis: .max)
            #expect(await coordinator.handle(.foreground).reason == .fetched)
            #expect(fetcher.calls == 3)
        }

        /// An app's adapter that triggers the coordinator from inside the fetch (its redeemer
        /// while the fetch starts the chosen operation, or its notifications while the fetch reads
        /// them) gets `insideFetch` at once; waiting for the fetch would wait for itself.
        @Test(arguments: [CallingBack.Adapter.redeemer, .notifications])
        func aTriggerFromInsideTheFetchDoesNotWaitForItself(adapter: CallingBack.Adapter) async throws {
            let fetcher = ScriptedFetcher(operations: [Practices.operation("T", created: 1)])
            let callingBack = CallingBack(adapter)
            let coordinator = coordinator(
                fetcher, redeemer: callingBack, notifications: callingBack, clock: ManualWallClock(millis: Self.start))
            callingBack.coordinator.withLock { $0 = coordinator }
            let finished = Locked(false)
            let fetch = Task {
                let outcome = await coordinator.handle(.foreground)
                finished.withLock { $0 = true }
                return outcome
            }
            // Polled without the coordinator: a trigger that waits for its own fetch also holds
            // the actor, and nothing would come back from it.
            let ended = await Practices.eventually { finished.withLock { $0 } }
            #expect(ended, "the fetch waits for a trigger that waits for the fetch")
            guard ended else { return }
            let snapshot = try #require(await fetch.value.snapshot)
            #expect(snapshot.started?.code == "redeemed")
            #expect(callingBack.outcomes == [.insideFetch])
            #expect(await coordinator.statistics.insideFetch == 1)
            #expect(await coordinator.statistics.decided == 2)
            #expect(fetcher.calls == 1)
            // Outside the fetch, a trigger is decided as usual.
            #expect(await coordinator.handle(.foreground).reason == .throttled)
        }

        /// A task that an adapter started inside one fetch, and that outlives it, is not inside
        /// the next fetch: its trigger then joins that fetch as anyone's does.
        @Test func aTaskStartedInsideAFetchJoinsALaterFetch() async throws {
            let clock = ManualWallClock(millis: Self.start)
            let fetcher = ScriptedFetcher(gated: true)
            let notifications = LaterTrigger()
            let coordinator = coordinator(fetcher, notifications: notifications, clock: clock)
            notifications.coordinator.withLock { $0 = coordinator }
            let first = Task { await coordinator.handle(.foreground) }
            await fetcher.waitForHeld()
            fetcher.releaseAll()
            #expect(await first.value.reason == .fetched)
            clock.advance(byMillis: FetchCoordinator.defaultThrottleWindowMillis)
            let second = Task { await coordinator.handle(.foreground) }
            await fetcher.waitForHeld()
            notifications.release()  // the task started in the first fetch triggers now
            #expect(await Practices.eventually { await coordinator.statistics.decided == 3 })
            fetcher.releaseAll()
            let snapshot = try #require(await second.value.snapshot)
            #expect(await Practices.eventually { notifications.outcome != nil })
            #expect(notifications.outcome == .joinedInFlight(snapshot))
            #expect(await coordinator.statistics.insideFetch == 0)
        }

        /// A fetch started by such a task after the earlier fetch ended is part of that one fetch
        /// only: the earlier fetch's mark is not handed on, so a chain of fetches started this way
        /// does not grow what each one carries.
        @Test func aFetchStartedFromAnEndedFetchsTaskCarriesOnlyItsOwnMark() async throws {
            let clock = ManualWallClock(millis: Self.start)
            let fetcher = MarkCountingFetcher()
            let notifications = LaterTrigger()
            let coordinator = FetchCoordinator(
                fetcher: fetcher, pipeline: RedemptionPipeline(redeemer: ImmediateRedeemer()), policy: .pushOnly,
                notifications: notifications, clock: clock)
            notifications.coordinator.withLock { $0 = coordinator }
            #expect(await coordinator.handle(.foreground).reason == .fetched)
            clock.advance(byMillis: FetchCoordinator.defaultThrottleWindowMillis)
            notifications.release()  // the task started in the first fetch triggers the second
            #expect(await Practices.eventually { notifications.outcome != nil })
            #expect(notifications.outcome?.reason == .fetched)
            #expect(fetcher.marksSeen == [1, 1], "the second fetch carried the first's mark too")
        }

        /// Statistics saved before a count existed still decode; the missing count is 0.
        @Test func statisticsWithoutACountDecodeWithZero() throws {
            let decoded = try JSONDecoder().decode(
                FetchCoordinatorStatistics.self, from: Data(#"{"fetched":2,"throttled":1}"#.utf8))
            var expected = FetchCoordinatorStatistics()
            expected.fetched = 2
            expected.throttled = 1
            #expect(decoded == expected)
        }

        @Test func theResultKeepsTheBackendErrors() async throws {
            let skew = PendingOutOfBandOperationsError.clockSkewTooBig(
                server: "https://skewed.example", measuredOffsetMillis: 600_000, toleranceMillis: 60_000,
                httpError: HTTPErrorInfo(status: 401, bodyExcerpt: #"{"errorCode":"CLOCK_SKEW_TOO_BIG"}"#))
            let fetcher = ScriptedFetcher(operations: [Practices.operation("t1", created: 1)], errors: [skew])
            let clock = ManualWallClock(millis: Self.start)
            let coordinator = coordinator(fetcher, clock: clock)
            let snapshot = try #require(await coordinator.handle(.foreground).snapshot)
            #expect(snapshot.errors == [skew])
            #expect(snapshot.operations.map(\.token) == ["t1"])
            // The cached result keeps them too.
            #expect(await coordinator.handle(.foreground).snapshot?.errors == [skew])
        }

        /// A fetch is decided first; then 999 mixed triggers, the pushes for the token it returns
        /// among them. Every fetch trigger shares or reuses that fetch (a fetch already under way
        /// or cached is no fetch competing with a push), and the token is redeemed once.
        @Test func aThousandMixedTriggersInOneWindowMakeOneFetch() async throws {
            let fetcher = ScriptedFetcher(operations: [Practices.operation("t", created: 1)])
            let redeemer = ImmediateRedeemer()
            let coordinator = coordinator(fetcher, redeemer: redeemer, clock: ManualWallClock(millis: Self.start))
            let first = Task { await coordinator.handle(.foreground) }
            #expect(await Practices.eventually { await coordinator.statistics.decided == 1 })
            let others = await withTaskGroup(of: TriggerOutcome.self) { group in
                for index in 1..<1_000 {
                    let trigger: FetchTrigger =
                        switch index % 3 {
                        case 0: .foreground
                        case 1: .userAction
                        default: .incoming(.pushNotification, Practices.payload("t"))
                        }
                    group.addTask { await coordinator.handle(trigger) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let outcomes = [await first.value] + others
            #expect(fetcher.calls == 1)
            let snapshots = outcomes.compactMap(\.snapshot)
            #expect(snapshots.count == 667)
            #expect(Set(snapshots).count == 1)
            #expect(outcomes.filter { $0.reason == .fetched }.count == 1)
            #expect(!outcomes.contains(.incomingUnderWay))
            #expect(redeemer.calls("t") == 1)
            #expect(await coordinator.statistics.decided == 1_000)
        }

        /// A push for T arrives while a fetch that returns T is under way, at each point of the fetch.
        @Test(arguments: [false, true])
        func anIncomingTokenThatAFetchAlsoReturnsIsRedeemedOnce(pushWhileChosenIsRedeeming: Bool) async throws {
            let fetcher = ScriptedFetcher(gated: true, operations: [Practices.operation("T", created: 1)])
            let redeemer = GatedRedeemer()
            let coordinator = coordinator(fetcher, redeemer: redeemer, clock: ManualWallClock(millis: Self.start))
            let fetch = Task { await coordinator.handle(.foreground) }
            await fetcher.waitForHeld()
            let push: Task<TriggerOutcome, Never>
            if pushWhileChosenIsRedeeming {
                fetcher.releaseAll()
                await redeemer.waitForWaiting(1)  // the fetch's choice, T, is in progress
                push = Task { await coordinator.handle(.incoming(.pushNotification, Practices.payload("T"))) }
                #expect(
                    await push.value
                        == .incomingRedeemedDirectly(.duplicate(identity: .onBackend("T"), state: .inProgress)))
                redeemer.resolve("T", succeed: true)
                #expect(try #require(await fetch.value.snapshot).started?.code == "redeemed")
            } else {
                push = Task { await coordinator.handle(.incoming(.pushNotification, Practices.payload("T"))) }
                await redeemer.waitForWaiting(1)  // the push's redemption is under way when the fetch returns T
                fetcher.releaseAll()
                let snapshot = try #require(await fetch.value.snapshot)
                #expect(snapshot.eligible.isEmpty && snapshot.started == nil)
                redeemer.resolve("T", succeed: true)
                #expect(await push.value.incomingReport?.code == "redeemed")
            }
            #expect(redeemer.calls("T") == 1)
            #expect(redeemer.redeemedAtBackend == ["T"])
            #expect(redeemer.violations.isEmpty)
        }
    }
}

/// One scheduled notification whose posting time is the clock's reading at each `current()`.
private final class RestampingNotifications: LocalNotifications {
    private let clock: ManualWallClock
    private let token: String
    private let cancelled = Locked<[String]>([])

    init(clock: ManualWallClock, token: String) {
        self.clock = clock
        self.token = token
    }

    var cancelledIdentifiers: [String] { cancelled.withLock { $0 } }

    func current() async -> [LocalNotification] {
        clock.advance(byMillis: 1)
        let gone = cancelled.withLock { $0.contains("scheduled") }
        return gone ? [] : [LocalNotification(identifier: "scheduled", token: token, postedAtMillis: clock.nowMillis())]
    }

    func cancel(identifiers: [String]) async {
        cancelled.withLock { $0.append(contentsOf: identifiers) }
    }
}

/// An app's adapter (redeemer and notifications) that triggers the coordinator once, from inside
/// the call the coordinator's fetch makes to it, and records what that trigger got.
final class CallingBack: OperationRedeeming, LocalNotifications {
    enum Adapter: Sendable, CustomTestStringConvertible {
        case redeemer, notifications
        var testDescription: String { self == .redeemer ? "the redeemer" : "the notifications" }
    }

    let adapter: Adapter
    let coordinator = Locked<FetchCoordinator?>(nil)
    private let recorded = Locked<[TriggerOutcome]>([])

    init(_ adapter: Adapter) {
        self.adapter = adapter
    }

    var outcomes: [TriggerOutcome] { recorded.withLock { $0 } }

    private func callBack(as caller: Adapter) async {
        guard caller == adapter, outcomes.isEmpty, let coordinator = coordinator.withLock({ $0 }) else { return }
        let outcome = await coordinator.handle(.userAction)
        recorded.withLock { $0.append(outcome) }
    }

    func redeem(_ payload: PendingOutOfBandOperation.Payload) async -> RedemptionResult {
        await callBack(as: .redeemer)
        return .success(Practices.answer)
    }

    func current() async -> [LocalNotification] {
        await callBack(as: .notifications)
        return []
    }

    func cancel(identifiers: [String]) async {}
}

/// Notifications whose first read starts a task (which inherits the fetch's task-locals) that
/// triggers the coordinator once ``release()`` is called, and records what it got.
/// A fetcher with nothing pending that records, at each fetch, how many fetch marks its task has.
final class MarkCountingFetcher: PendingOperationsFetching {
    private let seen = Locked<[Int]>([])

    var marksSeen: [Int] { seen.withLock { $0 } }

    func hasRegistration() async -> Bool { true }

    func fetch() async -> PendingOutOfBandOperationsResult {
        seen.withLock { $0.append(FetchCoordinator.marksOfThisTask) }
        return PendingOutOfBandOperationsResult(operations: [], errors: [])
    }
}

final class LaterTrigger: LocalNotifications {
    private struct State {
        var started = false
        var released = false
        var waiting: CheckedContinuation<Void, Never>?
        var outcome: TriggerOutcome?
    }

    let coordinator = Locked<FetchCoordinator?>(nil)
    private let state = Locked(State())

    var outcome: TriggerOutcome? { state.withLock { $0.outcome } }

    func release() {
        let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.released = true
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume()
    }

    private func released() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if !state.released { state.waiting = continuation }
                return state.released
            }
            if now { continuation.resume() }
        }
    }

    func current() async -> [LocalNotification] {
        let start = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        if start, let coordinator = coordinator.withLock({ $0 }) {
            Task {
                await released()
                let outcome = await coordinator.handle(.userAction)
                state.withLock { $0.outcome = outcome }
            }
        }
        return []
    }

    func cancel(identifiers: [String]) async {}
}

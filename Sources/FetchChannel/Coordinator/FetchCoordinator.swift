import DeviceSigning
import Synchronization

/// Decides when this device fetches its pending operations and which one it starts: the fetch
/// practices of a well-behaved fetch channel, as one actor per app.
///
/// A fetch happens only on a trigger (``FetchTrigger``); there is no timer. For each trigger,
/// in this order:
/// 1. `.incoming`: the operation goes straight to the ``pipeline``; nothing is fetched (no
///    registration is needed either: a registration QR code is how a device gets one).
/// 2. No registration: nothing is fetched (``TriggerOutcome/noRegistration``).
/// 3. A fetch under way: the trigger waits for it and shares its result (single flight); unless
///    the trigger comes from inside that fetch (the ``notifications`` or the pipeline's redeemer
///    calling back on the fetch's own task, or on a task it started that is not detached), which
///    cannot wait for itself (``TriggerOutcome/insideFetch``). A detached task, or another
///    thread, that the fetch waits for must not wait for the fetch in turn.
/// 4. The last fetch returned less than ``throttleWindowMillis`` ago: its cached result.
/// 5. An `.incoming` operation is being started: nothing is fetched
///    (``TriggerOutcome/incomingUnderWay``).
/// 6. Otherwise a fetch. Its operations are filtered by the ``policy`` and by the pipeline
///    (operations whose ``RedemptionIdentity`` is redeemed or in progress are left out); local
///    notifications whose token is no longer pending are cancelled; and, unless turned off, the
///    latest eligible operation is started through the pipeline, unless a redemption is under
///    way there, was under way as the fetch was decided or began since
///    (``RedemptionPipeline/redeemIfIdle(_:unlessActiveSince:)``), or an `.incoming` operation was
///    started while the fetch ran (the person is in that operation's flow, finished or not). The
///    fetch has already dropped every operation whose redeem URL is not on the backend that
///    returned it.
///
/// The snapshot a joined or throttled trigger gets is the fetch's own: its ``FetchSnapshot/chosen``
/// may have been started since. Starting it again through the pipeline is safe (a duplicate).
///
/// Time comes from the injected clock, so tests and simulations move it without sleeping.
public actor FetchCoordinator {
    /// The default throttle window: 5 s.
    public static let defaultThrottleWindowMillis: Int64 = 5_000

    /// Which fetched operations may be started; fixed for the coordinator's life.
    public nonisolated let policy: ChannelPolicy
    /// How long a fetch's result is served to later triggers instead of fetching again.
    public nonisolated let throttleWindowMillis: Int64
    /// Whether a fetch starts its chosen operation through the pipeline (otherwise the app does).
    public nonisolated let startsChosenOperation: Bool
    /// The one redemption path, shared with whatever else redeems (push handlers, the app).
    public nonisolated let pipeline: RedemptionPipeline

    private let fetcher: any PendingOperationsFetching
    private let notifications: (any LocalNotifications)?
    private let clock: any WallClock
    private var inFlight: Task<FetchSnapshot, Never>?
    /// The mark of the fetch under way, whose task carries it.
    private var inFlightMark: FetchMark?
    /// The marks of the fetches the current task is part of (a fetch's task and the tasks it
    /// starts inherit them): a trigger from there must not wait for that fetch. A task that
    /// outlives its fetch keeps a mark no later fetch has, and so joins those as any caller.
    @TaskLocal private static var fetchesOfThisTask: [FetchMark] = []
    private var lastFetch: FetchSnapshot?
    /// `.incoming` triggers whose operation the pipeline is redeeming now.
    private var incomingUnderWay = 0
    /// `.incoming` triggers so far: a fetch compares the count at its end with the one at its start.
    private var incomingStarted = 0
    /// How the triggers were decided so far.
    public private(set) var statistics = FetchCoordinatorStatistics()

    public init(
        fetcher: any PendingOperationsFetching, pipeline: RedemptionPipeline, policy: ChannelPolicy,
        notifications: (any LocalNotifications)? = nil,
        throttleWindowMillis: Int64 = FetchCoordinator.defaultThrottleWindowMillis,
        startsChosenOperation: Bool = true, clock: any WallClock = SystemWallClock()
    ) {
        precondition(throttleWindowMillis >= 0, "the throttle window cannot be negative")
        self.fetcher = fetcher
        self.pipeline = pipeline
        self.policy = policy
        self.notifications = notifications
        self.throttleWindowMillis = throttleWindowMillis
        self.startsChosenOperation = startsChosenOperation
        self.clock = clock
    }

    /// Acts on `trigger` and says what it did and why.
    ///
    /// A fetch runs in a task of its own, shared by every trigger that joins it: cancelling one
    /// caller does not cancel it (the others are waiting for it) and that caller still gets its result.
    public func handle(_ trigger: FetchTrigger) async -> TriggerOutcome {
        if case .incoming(_, let payload) = trigger {
            statistics.incomingRedeemedDirectly += 1
            incomingStarted += 1
            incomingUnderWay += 1
            defer { incomingUnderWay -= 1 }
            return .incomingRedeemedDirectly(await pipeline.redeem(payload))
        }
        guard await fetcher.hasRegistration() else {
            statistics.noRegistration += 1
            return .noRegistration
        }
        // Decided without a suspension from here until the task is stored: two triggers that both
        // passed the registration check cannot both start a fetch.
        if let inFlight {
            guard !Self.fetchesOfThisTask.contains(where: { $0 === inFlightMark }) else {
                statistics.insideFetch += 1
                return .insideFetch
            }
            statistics.joinedInFlight += 1
            return .joinedInFlight(await inFlight.value)
        }
        if let lastFetch, isWithinThrottleWindow(lastFetch) {
            statistics.throttled += 1
            return .throttled(lastFetch)
        }
        if incomingUnderWay > 0 {
            statistics.incomingUnderWay += 1
            return .incomingUnderWay
        }
        statistics.fetched += 1
        let sequence = statistics.fetched
        let mark = FetchMark()
        // Only the fetches under way: a task started inside an earlier fetch that triggers after
        // it would otherwise pass on a list that grows by one at every such fetch.
        let marks = Self.fetchesOfThisTask.filter { !$0.hasEnded } + [mark]
        let incomingBefore = incomingStarted
        // Read in this same step: a redemption under way on the pipeline now (the app may call it
        // directly, unseen here), or one that begins or ends from now on, keeps the fetch's choice
        // from starting.
        let redemptionsBefore = pipeline.activity
        let task = Task {
            // Ended after `fetchAndSettle` cleared `inFlightMark`: an ended mark is never the one
            // a trigger must recognise.
            defer { mark.end() }
            return await Self.$fetchesOfThisTask.withValue(marks) {
                await self.fetchAndSettle(
                    sequence: sequence, incomingBefore: incomingBefore, redemptionsBefore: redemptionsBefore)
            }
        }
        inFlight = task
        inFlightMark = mark
        return .fetched(await task.value)
    }

    /// One fetch's identity: an object, held by the marks that name it, so that it cannot be
    /// mistaken for another fetch's.
    private final class FetchMark: Sendable {
        private let ended = Atomic(false)

        var hasEnded: Bool { ended.load(ordering: .acquiring) }

        func end() { ended.store(true, ordering: .releasing) }
    }

    /// How many fetches the current task is part of, ended ones included (for tests).
    static var marksOfThisTask: Int { fetchesOfThisTask.count }

    /// The last completed fetch, if any.
    public var latestFetch: FetchSnapshot? { lastFetch }

    /// Whether a fetch is under way.
    public var isFetching: Bool { inFlight != nil }

    private func isWithinThrottleWindow(_ snapshot: FetchSnapshot) -> Bool {
        let (elapsed, overflow) = clock.nowMillis().subtractingReportingOverflow(snapshot.completedAtMillis)
        // A clock that went back (or jumped by more than an Int64 holds) is not a reason to stop
        // fetching until it catches up.
        return !overflow && elapsed >= 0 && elapsed < throttleWindowMillis
    }

    /// The notifications of `current` that are `stale`, as far as cancelling by identifier can
    /// reach them: one is matched by identifier, token and server (a platform may stamp its
    /// posting time anew on each read), and an identifier that also names a notification that is
    /// not stale (posted again, for a newer push) is left alone.
    private static func stillStale(_ stale: [LocalNotification], in current: [LocalNotification]) -> [LocalNotification]
    {
        struct Key: Hashable {
            let identifier: String
            let token: String
            let server: String?
            init(_ notification: LocalNotification) {
                identifier = notification.identifier
                token = notification.token
                server = notification.server
            }
        }
        let staleKeys = Set(stale.map(Key.init))
        let kept = Set(current.filter { !staleKeys.contains(Key($0)) }.map(\.identifier))
        var listed = Set<Key>()  // a notification the platform lists twice is reported once
        return current.filter {
            staleKeys.contains(Key($0)) && !kept.contains($0.identifier) && listed.insert(Key($0)).inserted
        }
    }

    /// One fetch and what follows from it; the result becomes the cached one as the in-flight
    /// task ends, in one step, so a trigger always finds one or the other. `incomingBefore` and
    /// `redemptionsBefore` are ``incomingStarted`` and the pipeline's
    /// ``RedemptionPipeline/activity`` as the fetch was decided.
    private func fetchAndSettle(sequence: Int, incomingBefore: Int, redemptionsBefore: RedemptionPipeline.Activity)
        async -> FetchSnapshot
    {
        // Only notifications that were there before the request can be contradicted by its answer.
        // Read, not compared by time: the clock may be set back while the fetch is under way.
        let notificationsBefore = await notifications?.current() ?? []
        let startedAt = clock.nowMillis()
        let result = await fetcher.fetch()
        let completedAt = clock.nowMillis()

        var cancelled: [LocalNotification] = []
        if let notifications {
            let stale = NotificationReconciliation.stale(
                notificationsBefore, operations: result.operations, failedServers: result.errors.map(\.server))
            if !stale.isEmpty {
                cancelled = Self.stillStale(stale, in: await notifications.current())
                if !cancelled.isEmpty {
                    var named = Set<String>()  // each identifier once, in the list's order
                    await notifications.cancel(
                        identifiers: cancelled.map(\.identifier).filter { named.insert($0).inserted })
                }
            }
        }

        let identities = result.operations.map(\.identity)
        let states = await pipeline.states(of: identities)
        // An operation the backend called expired is not chosen again, even while a backend lists it.
        let expired = await pipeline.expired(among: identities)
        let eligible = OperationSelection.eligible(
            result.operations.filter { !expired.contains($0.identity) }, policy: policy, states: states)
        var started: RedemptionReport?
        // An operation that came in while this fetch ran was started, and may have finished: the
        // chosen one, older than the answer, must not follow it into the person's hands. The
        // coordinator's count sees an incoming trigger before its redemption reaches the
        // pipeline; the pipeline's activity sees every redemption under way as the fetch was
        // decided, and every one begun or ended since, up to the very step that would begin the
        // chosen one.
        if startsChosenOperation, incomingStarted == incomingBefore, let chosen = eligible.last {
            started = await pipeline.redeemIfIdle(chosen, unlessActiveSince: redemptionsBefore)
        }

        let snapshot = FetchSnapshot(
            sequence: sequence, startedAtMillis: startedAt, completedAtMillis: completedAt,
            operations: result.operations, errors: result.errors, policy: policy,
            eligible: eligible, started: started, cancelledNotifications: cancelled)
        lastFetch = snapshot
        inFlight = nil
        inFlightMark = nil
        return snapshot
    }
}

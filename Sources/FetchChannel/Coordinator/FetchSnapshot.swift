/// What one fetch of a ``FetchCoordinator`` found and did. Every caller that shared the fetch,
/// and every throttled caller after it, gets this same value.
public struct FetchSnapshot: Sendable, Hashable {
    /// 1 for the coordinator's first fetch, then counting up: equal sequences are the same fetch.
    public let sequence: Int
    /// When the fetch was started and when it returned (the coordinator's clock, milliseconds since
    /// the epoch). The throttle window runs from `completedAtMillis`.
    public let startedAtMillis: Int64
    public let completedAtMillis: Int64
    /// Every operation the backends that answered hold, any channel, creation time ascending.
    public let operations: [PendingOutOfBandOperation]
    /// One error per backend that failed (clock skew, network, …): for the app to show.
    public let errors: [PendingOutOfBandOperationsError]
    /// The coordinator's policy.
    public let policy: ChannelPolicy
    /// The operations the policy admits that were neither redeemed nor in progress when the fetch
    /// returned, and that the backend had not called expired, creation time ascending.
    public let eligible: [PendingOutOfBandOperation]
    /// What the pipeline did with ``chosen`` (nil when nothing was eligible, another redemption
    /// was under way in the pipeline or an incoming operation was started while the fetch ran,
    /// or the coordinator does not start operations itself).
    ///
    /// Every trigger that shares this snapshot sees the same report: act on a redeemed operation
    /// (start its flow) only for ``TriggerOutcome/fetched(_:)``, whose trigger started the fetch;
    /// a joined or throttled trigger would start the same flow once more.
    public let started: RedemptionReport?
    /// The local notifications this fetch cancelled because their token is no longer pending.
    public let cancelledNotifications: [LocalNotification]

    public init(
        sequence: Int, startedAtMillis: Int64, completedAtMillis: Int64, operations: [PendingOutOfBandOperation],
        errors: [PendingOutOfBandOperationsError], policy: ChannelPolicy, eligible: [PendingOutOfBandOperation],
        started: RedemptionReport?, cancelledNotifications: [LocalNotification]
    ) {
        self.sequence = sequence
        self.startedAtMillis = startedAtMillis
        self.completedAtMillis = completedAtMillis
        self.operations = operations
        self.errors = errors
        self.policy = policy
        self.eligible = eligible
        self.started = started
        self.cancelledNotifications = cancelledNotifications
    }

    /// The operation to start: the latest eligible one.
    public var chosen: PendingOutOfBandOperation? { eligible.last }
}

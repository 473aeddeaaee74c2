/// How a ``FetchCoordinator``'s triggers were decided, counted as each decision is taken (a
/// trigger that joins a fetch counts as joined as soon as it starts waiting).
public struct FetchCoordinatorStatistics: Sendable, Hashable, Codable {
    /// Triggers that started a fetch: the requests the backends saw (one per registration each).
    public var fetched = 0
    public var joinedInFlight = 0
    public var throttled = 0
    public var noRegistration = 0
    public var incomingRedeemedDirectly = 0
    public var incomingUnderWay = 0

    public init() {}

    /// Every trigger decided so far.
    public var decided: Int {
        fetched + joinedInFlight + throttled + noRegistration + incomingRedeemedDirectly + incomingUnderWay
    }
}

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
    public var insideFetch = 0

    public init() {}

    private enum CodingKeys: String, CodingKey {
        case fetched, joinedInFlight, throttled, noRegistration, incomingRedeemedDirectly, incomingUnderWay
        case insideFetch
    }

    /// A count missing from the encoding (one saved before that count existed) reads as 0.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func count(_ key: CodingKeys) throws -> Int { try container.decodeIfPresent(Int.self, forKey: key) ?? 0 }
        fetched = try count(.fetched)
        joinedInFlight = try count(.joinedInFlight)
        throttled = try count(.throttled)
        noRegistration = try count(.noRegistration)
        incomingRedeemedDirectly = try count(.incomingRedeemedDirectly)
        incomingUnderWay = try count(.incomingUnderWay)
        insideFetch = try count(.insideFetch)
    }

    /// Every trigger decided so far.
    public var decided: Int {
        fetched + joinedInFlight + throttled + noRegistration + incomingRedeemedDirectly + incomingUnderWay
            + insideFetch
    }
}

/// What a ``FetchCoordinator`` did for one trigger, and why: every guard is visible.
public enum TriggerOutcome: Sendable, Hashable, CustomStringConvertible {
    /// This trigger started a fetch (one request per registration).
    case fetched(FetchSnapshot)
    /// A fetch was under way: this trigger waited for it and shares its result; no request.
    case joinedInFlight(FetchSnapshot)
    /// The last fetch returned within the throttle window: its result; no request.
    case throttled(FetchSnapshot)
    /// No user or key is registered: nothing fetched.
    case noRegistration
    /// A push, link or QR code carried the operation: it went straight to the pipeline; nothing fetched.
    case incomingRedeemedDirectly(RedemptionReport)
    /// A push, link or QR code is starting an operation now: nothing fetched, so that a fetch does
    /// not compete with it. The trigger is not kept for later: the person is in that operation's
    /// flow, and the next trigger fetches.
    case incomingUnderWay
    /// The trigger came from inside the fetch under way (the local notifications or the
    /// pipeline's redeemer calling back while that fetch waits for them, on its task or one it
    /// started): waiting for the fetch would wait for itself, so nothing is fetched; that
    /// fetch's result is the caller's own.
    case insideFetch

    /// Why, in one word: stable, for logs and tests.
    public enum Reason: String, Sendable, Hashable, CaseIterable {
        case fetched, joinedInFlight, throttled, noRegistration, incomingRedeemedDirectly, incomingUnderWay
        case insideFetch
    }

    public var reason: Reason {
        switch self {
        case .fetched: .fetched
        case .joinedInFlight: .joinedInFlight
        case .throttled: .throttled
        case .noRegistration: .noRegistration
        case .incomingRedeemedDirectly: .incomingRedeemedDirectly
        case .incomingUnderWay: .incomingUnderWay
        case .insideFetch: .insideFetch
        }
    }

    /// The fetch result this trigger got (fresh, shared or cached), if any.
    public var snapshot: FetchSnapshot? {
        switch self {
        case .fetched(let snapshot), .joinedInFlight(let snapshot), .throttled(let snapshot): snapshot
        case .noRegistration, .incomingRedeemedDirectly, .incomingUnderWay, .insideFetch: nil
        }
    }

    /// What the pipeline did with an incoming operation.
    public var incomingReport: RedemptionReport? {
        if case .incomingRedeemedDirectly(let report) = self { return report }
        return nil
    }

    public var description: String {
        switch self {
        case .fetched(let snapshot), .joinedInFlight(let snapshot), .throttled(let snapshot):
            "\(reason.rawValue)(fetch #\(snapshot.sequence))"
        case .noRegistration, .incomingUnderWay, .insideFetch:
            reason.rawValue
        case .incomingRedeemedDirectly(let report):
            "\(reason.rawValue)(\(report))"
        }
    }
}

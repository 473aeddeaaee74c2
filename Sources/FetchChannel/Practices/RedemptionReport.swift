/// What a ``RedemptionPipeline`` did with a token.
public enum RedemptionReport: Sendable, Hashable, CustomStringConvertible {
    /// Redeemed now: the token moved to the redeemed set; `operation` is the backend's answer
    /// (the UAF request to carry on with).
    case redeemed(token: String, operation: RedeemedOperation)
    /// The backend said it was redeemed before (elsewhere, or by a run that forgot it): the token
    /// moved to the redeemed set; do not start it.
    case alreadyRedeemed(token: String)
    /// Skipped without a request: the token is redeemed or in progress here.
    case duplicate(token: String, state: RedemptionState)
    /// The operation's lifetime is over (`error` is `tokenExpired`): dropped, neither redeemed nor
    /// retried; `error.message` tells the person to start a new one.
    case expired(token: String, error: RedemptionError)
    /// No usable answer (`error` is `networkError` or `unknown`, 5xx included): the token is
    /// released, so it can be tried again.
    case released(token: String, error: RedemptionError)

    public var token: String {
        switch self {
        case .redeemed(let token, _), .alreadyRedeemed(let token), .duplicate(let token, _),
             .expired(let token, _), .released(let token, _):
            token
        }
    }

    /// `redeemed`, `alreadyRedeemed`, `duplicate`, `expired` or `released`: stable, for logs.
    public var code: String {
        switch self {
        case .redeemed: "redeemed"
        case .alreadyRedeemed: "alreadyRedeemed"
        case .duplicate: "duplicate"
        case .expired: "expired"
        case .released: "released"
        }
    }

    /// Whether the token is now in the redeemed set because of this call.
    public var movedToRedeemed: Bool {
        switch self {
        case .redeemed, .alreadyRedeemed: true
        case .duplicate, .expired, .released: false
        }
    }

    public var description: String {
        switch self {
        case .duplicate(let token, let state): "\(code)(\(token), \(state))"
        case .released(let token, let error): "\(code)(\(token), \(error.code))"
        default: "\(code)(\(token))"
        }
    }
}

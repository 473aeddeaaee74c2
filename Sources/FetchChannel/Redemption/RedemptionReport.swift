/// What a ``RedemptionPipeline`` did with an operation, named by its ``RedemptionIdentity``
/// (the token at its redeem URL's origin).
public enum RedemptionReport: Sendable, Hashable, CustomStringConvertible {
    /// Redeemed now: the identity moved to the redeemed set; `operation` is the backend's answer
    /// (the UAF request to carry on with).
    case redeemed(identity: RedemptionIdentity, operation: RedeemedOperation)
    /// The backend said it was redeemed before (elsewhere, or by a run that forgot it): the
    /// identity moved to the redeemed set; do not start it.
    case alreadyRedeemed(identity: RedemptionIdentity)
    /// Skipped without a request: the identity is redeemed or in progress here.
    case duplicate(identity: RedemptionIdentity, state: RedemptionState)
    /// The operation's lifetime is over (`error` is `tokenExpired`): dropped, neither redeemed nor
    /// retried; `error.message` tells the person to start a new one.
    case expired(identity: RedemptionIdentity, error: RedemptionError)
    /// No usable answer (`error` is `networkError` — a redeem URL outside the registered backends
    /// included — or `unknown`, 5xx included): released, so it can be tried again.
    case released(identity: RedemptionIdentity, error: RedemptionError)

    /// The report for a request that came to `outcome`: the same split as
    /// ``RedemptionLedger/finish(_:with:)`` makes.
    init(_ identity: RedemptionIdentity, settledWith outcome: Result<RedeemedOperation, RedemptionError>) {
        switch outcome {
        case .success(let operation):
            self = .redeemed(identity: identity, operation: operation)
        case .failure(let error):
            switch error {
            case .tokenAlreadyRedeemed: self = .alreadyRedeemed(identity: identity)
            case .tokenExpired: self = .expired(identity: identity, error: error)
            case .networkError, .unknown: self = .released(identity: identity, error: error)
            }
        }
    }

    public var identity: RedemptionIdentity {
        switch self {
        case .redeemed(let identity, _), .alreadyRedeemed(let identity), .duplicate(let identity, _),
            .expired(let identity, _), .released(let identity, _):
            identity
        }
    }

    /// The redeem token.
    public var token: String { identity.token }

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

    /// Whether the identity is now in the redeemed set because of this call.
    public var movedToRedeemed: Bool {
        switch self {
        case .redeemed, .alreadyRedeemed: true
        case .duplicate, .expired, .released: false
        }
    }

    public var description: String {
        switch self {
        case .duplicate(let identity, let state): "\(code)(\(identity), \(state))"
        case .released(let identity, let error): "\(code)(\(identity), \(error.code))"
        default: "\(code)(\(identity))"
        }
    }
}

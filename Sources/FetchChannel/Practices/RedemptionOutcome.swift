/// What one redemption request came to, as an ``OperationRedeeming`` reports it.
public enum RedemptionOutcome: Sendable, Hashable {
    /// The backend accepted the token: the operation started.
    case redeemed(RedemptionAnswer)
    /// The backend says the token was redeemed before (410 `TOKEN_ALREADY_REDEEMED`).
    case tokenAlreadyRedeemed
    /// The operation's lifetime is over (410 `TOKEN_EXPIRED`).
    case tokenExpired
    /// No usable answer; the token may be tried again.
    case failed(RedemptionFailure)
}

/// Where a redeem token stands in a ``RedemptionPipeline``.
public enum RedemptionState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Neither redeemed nor in progress (or forgotten: evicted from the bounded redeemed set).
    case unseen
    /// A redemption request for it is under way.
    case inProgress
    /// Redeemed here, or the backend said it was redeemed before.
    case redeemed

    public var description: String { rawValue }
}

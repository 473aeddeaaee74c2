/// Redeems one operation's token at its backend: the network half of redemption, behind a
/// protocol so that ``RedemptionPipeline`` can be driven by a fake in tests. ``RedemptionClient``
/// is the real one.
public protocol OperationRedeeming: Sendable {
    /// Sends `payload.redeemData` to its redeem URL once, without retrying. Never throws: every
    /// failure, cancellation included, is a ``RedemptionError``.
    func redeem(_ payload: PendingOutOfBandOperation.Payload) async -> Result<RedeemedOperation, RedemptionError>
}

/// What a fetch from all registrations came to: the operations of every backend that answered and
/// one error for every backend that did not. A failing backend never hides another's operations.
public struct PendingOutOfBandOperationsResult: Sendable, Hashable {
    /// Merged with ``OperationOrdering/merged(_:)``: creation time ascending (the latest last),
    /// duplicates removed by ``RedemptionIdentity`` (the token at its redeem URL's origin: one
    /// token from two origins is two operations); independent of which backend answered first.
    public let operations: [PendingOutOfBandOperation]
    /// One per failing registration, in the order the registrations were given. A registration
    /// that returned operations whose redeem URL is on another origin has one too
    /// (`invalidResponse`): those were dropped, and its other operations are in ``operations``.
    public let errors: [PendingOutOfBandOperationsError]

    public init(operations: [PendingOutOfBandOperation], errors: [PendingOutOfBandOperationsError]) {
        self.operations = operations
        self.errors = errors
    }
}

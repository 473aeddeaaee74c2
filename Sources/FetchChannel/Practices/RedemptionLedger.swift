/// The bookkeeping of exactly-once redemption, without the network: which tokens are in
/// progress and which are redeemed. ``RedemptionPipeline`` owns one and is its only writer; it is
/// a plain value so that the rules can be tested and measured on their own.
///
/// A token goes `unseen -> inProgress` (``begin(_:)``) before the request and leaves
/// `inProgress` in ``finish(_:with:)`` whatever the outcome: to `redeemed` on success or
/// `tokenAlreadyRedeemed`, back to `unseen` on a failure (released) or an expiry (dropped).
package struct RedemptionLedger: Sendable {
    package private(set) var redeemed: BoundedTokenSet
    package private(set) var inProgress: Set<String> = []

    package init(capacity: Int, redeemedOldestFirst: [String] = []) {
        redeemed = BoundedTokenSet(capacity: capacity, oldestFirst: redeemedOldestFirst)
    }

    package func state(of token: String) -> RedemptionState {
        if inProgress.contains(token) { return .inProgress }
        return redeemed.contains(token) ? .redeemed : .unseen
    }

    /// Marks `token` in progress if it is neither redeemed nor in progress, and returns the state
    /// it had: `.unseen` means the caller now owns it and must call ``finish(_:with:)``; anything
    /// else means it is a duplicate and nothing changed.
    package mutating func begin(_ token: String) -> RedemptionState {
        if redeemed.contains(token) { return .redeemed }
        return inProgress.insert(token).inserted ? .unseen : .inProgress
    }

    /// Ends the redemption `begin` started and says what became of the token.
    package mutating func finish(_ token: String, with outcome: Result<RedeemedOperation, RedemptionError>) -> RedemptionReport {
        let wasInProgress = inProgress.remove(token) != nil
        precondition(wasInProgress, "finish(\(token)) without a matching begin")
        switch outcome {
        case .success(let operation):
            redeemed.insert(token)
            return .redeemed(token: token, operation: operation)
        case .failure(let error):
            switch error {
            case .tokenAlreadyRedeemed:
                redeemed.insert(token)
                return .alreadyRedeemed(token: token)
            case .tokenExpired:
                return .expired(token: token, error: error)
            case .networkError, .unknown:
                return .released(token: token, error: error)
            }
        }
    }
}

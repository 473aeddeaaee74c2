/// The bookkeeping of exactly-once redemption, without the network: which tokens are in
/// progress and which are redeemed. ``RedemptionPipeline`` owns one and is its only writer; it is
/// a plain value so that the rules can be tested and measured on their own.
///
/// A token goes `unseen -> inProgress` (``begin(_:)``) before the request and leaves
/// `inProgress` in ``finish(_:with:)`` whatever the outcome: to `redeemed` on success or
/// `tokenAlreadyRedeemed`, back to `unseen` on a failure (released) or an expiry (dropped).
///
/// The redeemed tokens are bounded by `capacity`: the oldest is forgotten (becomes `unseen`) when
/// a new one would exceed it. One dictionary holds both states, so each step costs one hash
/// lookup (begin, a duplicate refused, finish) plus one for an eviction; a ring of the redeemed
/// tokens keeps their order. Memory: `capacity` redeemed entries plus the requests under way.
package struct RedemptionLedger: Sendable {
    package let capacity: Int
    /// `.inProgress` or `.redeemed`; a token that is neither is absent.
    private var states: [String: RedemptionState] = [:]
    /// The redeemed tokens in the order they were redeemed; once full, `ring[oldest]` is the oldest.
    private var ring: [String] = []
    private var oldest = 0

    package init(capacity: Int, redeemedOldestFirst: [String] = []) {
        precondition(capacity >= 1, "RedemptionLedger needs a capacity of at least 1")
        self.capacity = capacity
        // Twice the entries it holds: a sparse table keeps the probe runs short, and removing
        // a key (every eviction) rehashes the run after it.
        states.reserveCapacity(2 * Swift.min(capacity, 1 << 20) + 64)
        ring.reserveCapacity(Swift.min(capacity, 1 << 16))
        for token in redeemedOldestFirst where states.updateValue(.redeemed, forKey: token) == nil {
            remember(token)
        }
    }

    package func state(of token: String) -> RedemptionState {
        states[token] ?? .unseen
    }

    /// Marks `token` in progress if it is neither redeemed nor in progress, and returns the state
    /// it had: `.unseen` means the caller now owns it and must call ``finish(_:with:)``; anything
    /// else means it is a duplicate and nothing changed.
    package mutating func begin(_ token: String) -> RedemptionState {
        Self.advance(&states[token, default: .unseen])  // one lookup: read, and insert if absent
    }

    /// Ends the redemption `begin` started and says what became of the token.
    package mutating func finish(_ token: String, with outcome: Result<RedeemedOperation, RedemptionError>) -> RedemptionReport {
        switch outcome {
        case .success(let operation):
            markRedeemed(token)
            return .redeemed(token: token, operation: operation)
        case .failure(let error):
            switch error {
            case .tokenAlreadyRedeemed:
                markRedeemed(token)
                return .alreadyRedeemed(token: token)
            case .tokenExpired:
                release(token)
                return .expired(token: token, error: error)
            case .networkError, .unknown:
                release(token)
                return .released(token: token, error: error)
            }
        }
    }

    /// The redeemed tokens remembered, oldest first.
    package var redeemedOldestFirst: [String] {
        Array(ring[oldest...] + ring[..<oldest])
    }

    package var redeemedCount: Int { ring.count }

    /// The tokens in progress (a scan: for inspection, not for the hot path).
    package var inProgress: Set<String> {
        Set(states.lazy.filter { $0.value == .inProgress }.map(\.key))
    }

    private static func advance(_ state: inout RedemptionState) -> RedemptionState {
        let previous = state
        if previous == .unseen { state = .inProgress }
        return previous
    }

    private mutating func markRedeemed(_ token: String) {
        let previous = states.updateValue(.redeemed, forKey: token)
        precondition(previous == .inProgress, "finish(\(token)) without a matching begin")
        remember(token)
    }

    private mutating func release(_ token: String) {
        let previous = states.removeValue(forKey: token)
        precondition(previous == .inProgress, "finish(\(token)) without a matching begin")
    }

    /// Appends a newly redeemed token to the ring, forgetting the oldest beyond the capacity.
    private mutating func remember(_ token: String) {
        guard ring.count == capacity else {
            ring.append(token)
            return
        }
        states.removeValue(forKey: ring[oldest])
        ring[oldest] = token
        oldest = oldest + 1 == capacity ? 0 : oldest + 1
    }
}

/// The bookkeeping of exactly-once redemption, without the network: which keys are in progress
/// and which are redeemed. ``RedemptionPipeline`` owns one keyed by ``RedemptionIdentity`` and is
/// its only writer; it is a plain value, generic over its key, so that the rules can be tested
/// and measured on their own (the benchmark keys it by plain strings).
///
/// A key goes `unseen -> inProgress` (``begin(_:)``) before the request and leaves `inProgress`
/// in ``finish(_:with:)`` whatever the outcome: to `redeemed` on success or
/// `tokenAlreadyRedeemed`, back to `unseen` on any other failure (released, or dropped when expired).
///
/// The redeemed keys are bounded by `capacity`: the oldest is forgotten (becomes `unseen`) when
/// a new one would exceed it. One dictionary holds both states, so each step costs one hash
/// lookup (begin, a duplicate refused, finish) plus one for an eviction; a ring of the redeemed
/// keys keeps their order. Memory: `capacity` redeemed entries plus the requests under way.
package struct RedemptionLedger<Key: Hashable & Sendable>: Sendable {
    package let capacity: Int
    /// `.inProgress` or `.redeemed`; a key that is neither is absent.
    private var states: [Key: RedemptionState] = [:]
    /// The redeemed keys in the order they were redeemed; once full, `ring[oldest]` is the oldest.
    private var ring: [Key] = []
    private var oldest = 0
    /// How many keys are `.inProgress`: kept as they change, so that asking costs nothing.
    package private(set) var inProgressCount = 0

    package init(capacity: Int, redeemedOldestFirst: [Key] = []) {
        precondition(capacity >= 1, "RedemptionLedger needs a capacity of at least 1")
        self.capacity = capacity
        // Twice the entries it holds: a sparse table keeps the probe runs short, and removing
        // a key (every eviction) rehashes the run after it.
        states.reserveCapacity(2 * Swift.min(capacity, 1 << 20) + 64)
        ring.reserveCapacity(Swift.min(capacity, 1 << 16))
        for key in redeemedOldestFirst where states.updateValue(.redeemed, forKey: key) == nil {
            remember(key)
        }
    }

    package func state(of key: Key) -> RedemptionState {
        states[key] ?? .unseen
    }

    /// Marks `key` in progress if it is neither redeemed nor in progress, and returns the state
    /// it had: `.unseen` means the caller now owns it and must call ``finish(_:with:)``; anything
    /// else means it is a duplicate and nothing changed.
    package mutating func begin(_ key: Key) -> RedemptionState {
        let previous = Self.advance(&states[key, default: .unseen])  // one lookup: read, and insert if absent
        if previous == .unseen { inProgressCount += 1 }
        return previous
    }

    /// Ends the redemption `begin` started and returns the key's state now: `.redeemed` or `.unseen`.
    @discardableResult
    package mutating func finish(
        _ key: Key,
        with outcome: Result<RedeemedOperation, RedemptionError>
    ) -> RedemptionState {
        switch outcome {
        case .success, .failure(.tokenAlreadyRedeemed):
            let previous = states.updateValue(.redeemed, forKey: key)
            precondition(previous == .inProgress, "finish(\(key)) without a matching begin")
            inProgressCount -= 1
            remember(key)
            return .redeemed
        case .failure(.tokenExpired), .failure(.networkError), .failure(.unknown):
            let previous = states.removeValue(forKey: key)
            precondition(previous == .inProgress, "finish(\(key)) without a matching begin")
            inProgressCount -= 1
            return .unseen
        }
    }

    /// The redeemed keys remembered, oldest first.
    package var redeemedOldestFirst: [Key] {
        Array(ring[oldest...] + ring[..<oldest])
    }

    package var redeemedCount: Int { ring.count }

    /// The keys in progress (a scan: for inspection, not for the hot path).
    package var inProgress: Set<Key> {
        Set(states.lazy.filter { $0.value == .inProgress }.map(\.key))
    }

    private static func advance(_ state: inout RedemptionState) -> RedemptionState {
        let previous = state
        if previous == .unseen { state = .inProgress }
        return previous
    }

    /// Appends a newly redeemed key to the ring, forgetting the oldest beyond the capacity.
    private mutating func remember(_ key: Key) {
        guard ring.count == capacity else {
            ring.append(key)
            return
        }
        states.removeValue(forKey: ring[oldest])
        ring[oldest] = key
        oldest = oldest + 1 == capacity ? 0 : oldest + 1
    }
}

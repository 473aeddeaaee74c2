/// A set of redeem tokens that holds at most `capacity`: inserting into a full set evicts the
/// oldest member. Membership, insertion and eviction are O(1); memory is bounded by the
/// capacity (one hash-set entry and one ring slot per member).
package struct BoundedTokenSet: Sendable {
    package let capacity: Int
    private var members: Set<String>
    /// Members in insertion order, as a ring once full: `ring[oldest]` is the oldest.
    private var ring: [String]
    private var oldest = 0

    /// An empty set, or one holding the last `capacity` of `oldestFirst`.
    package init(capacity: Int, oldestFirst: [String] = []) {
        precondition(capacity >= 1, "BoundedTokenSet needs a capacity of at least 1")
        self.capacity = capacity
        members = Set(minimumCapacity: Swift.min(capacity, 1 << 16))
        ring = []
        ring.reserveCapacity(Swift.min(capacity, 1 << 16))
        for token in oldestFirst { insert(token) }
    }

    package var count: Int { ring.count }

    package func contains(_ token: String) -> Bool {
        members.contains(token)
    }

    /// Inserts `token` (a member already keeps its place); returns the member evicted for it.
    @discardableResult
    package mutating func insert(_ token: String) -> String? {
        guard members.insert(token).inserted else { return nil }
        if ring.count < capacity {
            ring.append(token)
            return nil
        }
        let evicted = ring[oldest]
        members.remove(evicted)
        ring[oldest] = token
        oldest = oldest + 1 == capacity ? 0 : oldest + 1
        return evicted
    }

    /// The members, oldest first.
    package var oldestFirst: [String] {
        Array(ring[oldest...] + ring[..<oldest])
    }
}

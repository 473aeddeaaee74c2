/// Request ids accepted within the replay window, per dispatch target; bounded.
///
/// An entry is live while `now <= expiry`. Expired entries are dropped (soonest expiry first,
/// from a min-heap) before each lookup. A live entry is never evicted: when `capacity` live
/// entries exist, `insert` answers `.full` instead, because evicting one would let its request
/// be replayed.
struct ReplayCache: Sendable {
    struct Key: Hashable, Sendable {
        let dispatchTargetId: String
        let requestId: String
    }

    enum Outcome: Equatable {
        case inserted
        case replayed
        case full
    }

    let capacity: Int
    private var expiries: [Key: Int64] = [:]
    private var heap = ExpiryHeap()

    init(capacity: Int) {
        self.capacity = capacity
    }

    var count: Int { expiries.count }

    /// Records `key` until `expiry` unless it is live already (`.replayed`) or the cache is full
    /// of live entries (`.full`).
    mutating func insert(_ key: Key, expiry: Int64, now: Int64) -> Outcome {
        removeExpired(now: now)
        if expiries[key] != nil { return .replayed }
        guard expiries.count < capacity else { return .full }
        expiries[key] = expiry
        heap.push(ExpiryHeap.Entry(expiry: expiry, key: key))
        return .inserted
    }

    /// Drops every entry with `expiry < now`.
    mutating func removeExpired(now: Int64) {
        while let first = heap.first, first.expiry < now {
            heap.popFirst()
            // Keys are unique in the heap (a key is re-inserted only after its entry was
            // removed here), but check anyway rather than drop a live entry.
            if expiries[first.key] == first.expiry {
                expiries.removeValue(forKey: first.key)
            }
        }
    }
}

/// A binary min-heap of cache entries ordered by expiry.
struct ExpiryHeap: Sendable {
    struct Entry: Sendable {
        let expiry: Int64
        let key: ReplayCache.Key
    }

    private var storage: [Entry] = []

    var first: Entry? { storage.first }
    var count: Int { storage.count }

    mutating func push(_ entry: Entry) {
        storage.append(entry)
        var child = storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard storage[child].expiry < storage[parent].expiry else { break }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popFirst() {
        guard !storage.isEmpty else { return }
        storage.swapAt(0, storage.count - 1)
        storage.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < storage.count, storage[left].expiry < storage[smallest].expiry { smallest = left }
            if right < storage.count, storage[right].expiry < storage[smallest].expiry { smallest = right }
            guard smallest != parent else { return }
            storage.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

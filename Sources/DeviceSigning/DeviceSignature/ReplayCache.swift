/// Request ids accepted within the replay window, per dispatch target; bounded in total and per
/// dispatch target.
///
/// An entry is live while `now <= expiry`. Expired entries are dropped (soonest expiry first,
/// from a min-heap) before each lookup. A live entry is never evicted, because evicting one would
/// let its request be replayed. Instead:
/// - a dispatch target that holds `quotaPerDispatchTarget` live entries gets `.quotaExceeded`
///   for its new requests until its oldest entry expires; other dispatch targets are unaffected,
///   so one device (or one leaked key) flooding the backend cannot lock the others out;
/// - when `capacity` live entries exist in all, `insert` answers `.full`.
///
/// A wall clock can be set back, and then a request whose entry was dropped as expired can be
/// fresh again. So the cache keeps the latest expiry it has dropped (``forgottenThrough``), and
/// `insert` refuses, as `.replayed`, a request whose entry could have expired by then (its
/// earliest possible expiry, `creationTime + tolerance`, is no later): the cache can no longer
/// tell whether it was accepted before. With a clock that does not go back, every fresh request
/// is later than that and nothing changes.
///
/// Not thread-safe: the verifier keeps it behind a lock and reads the time under that lock
/// (docs/ARCHITECTURE.md, "Invariants"), so two verifications never see the time in two orders.
struct ReplayCache: Sendable {
    struct Key: Hashable, Sendable {
        let dispatchTargetId: String
        let requestId: String
    }

    enum Outcome: Equatable {
        case inserted
        case replayed
        /// The dispatch target holds its quota of live entries; the oldest is dropped after
        /// `retryAfterMillis` (≥ 1).
        case quotaExceeded(retryAfterMillis: Int64)
        case full
    }

    let capacity: Int
    let quotaPerDispatchTarget: Int
    private var expiries: [Key: Int64] = [:]
    /// Every entry, soonest expiry first: what `removeExpired` drops.
    private var heap = ExpiryHeap<Key>()
    /// Each dispatch target's entries, soonest expiry first: its count and its oldest entry.
    /// A dispatch target without live entries has no heap here.
    private var perDispatchTarget: [String: ExpiryHeap<String>] = [:]
    /// The latest expiry of an entry dropped so far; `Int64.min` before the first.
    private(set) var forgottenThrough = Int64.min

    init(capacity: Int, quotaPerDispatchTarget: Int) {
        self.capacity = capacity
        self.quotaPerDispatchTarget = quotaPerDispatchTarget
    }

    var count: Int { expiries.count }

    /// Records `key` until `expiry` unless it is live already or could have been dropped already
    /// (`.replayed`: `earliestExpiry`, the earliest expiry it could have been recorded with, is
    /// not after ``forgottenThrough``), its dispatch target holds its quota of live entries
    /// (`.quotaExceeded`) or the cache is full (`.full`).
    mutating func insert(_ key: Key, expiry: Int64, earliestExpiry: Int64, now: Int64) -> Outcome {
        removeExpired(now: now)
        if expiries[key] != nil || earliestExpiry <= forgottenThrough { return .replayed }
        if let own = perDispatchTarget[key.dispatchTargetId], own.count >= quotaPerDispatchTarget,
            let oldest = own.first
        {
            return .quotaExceeded(retryAfterMillis: Self.millisUntilDropped(expiry: oldest.expiry, now: now))
        }
        guard expiries.count < capacity else { return .full }
        expiries[key] = expiry
        heap.push(.init(expiry: expiry, element: key))
        perDispatchTarget[key.dispatchTargetId, default: ExpiryHeap()]
            .push(.init(expiry: expiry, element: key.requestId))
        return .inserted
    }

    /// Drops every entry with `expiry < now`.
    mutating func removeExpired(now: Int64) {
        while let first = heap.first, first.expiry < now {
            heap.popFirst()
            // Keys are unique in the heap (a key is re-inserted only after its entry was
            // removed here), but check anyway rather than drop a live entry.
            guard expiries[first.element] == first.expiry else { continue }
            expiries.removeValue(forKey: first.element)
            forgottenThrough = max(forgottenThrough, first.expiry)
            // The dispatch target's heap pops in the same expiry order, so its first entry has
            // this expiry (ties are interchangeable: only expiries and the count are read).
            let target = first.element.dispatchTargetId
            perDispatchTarget[target]?.popFirst()
            if perDispatchTarget[target]?.count == 0 { perDispatchTarget.removeValue(forKey: target) }
        }
    }

    /// `expiry + 1 - now` (an entry is dropped once `now > expiry`), at least 1, saturating.
    private static func millisUntilDropped(expiry: Int64, now: Int64) -> Int64 {
        let (difference, overflow) = expiry.subtractingReportingOverflow(now)
        if overflow { return .max }  // only when expiry > 0 > now: the answer is huge
        return difference == .max ? .max : max(1, difference + 1)
    }
}

/// A binary min-heap of elements ordered by expiry.
struct ExpiryHeap<Element: Sendable>: Sendable {
    struct Entry: Sendable {
        let expiry: Int64
        let element: Element
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

/// Merging the operations of several backends into the one list the app sees.
public enum OperationOrdering {
    /// Sorted by creation time ascending (the latest last), ties broken by server, token and
    /// redeem URL so the order never depends on which backend answered first; duplicates by
    /// ``PendingOutOfBandOperation/identity`` removed (two registrations on one backend), keeping
    /// the earliest occurrence. The same token from two origins is two operations: both are kept.
    public static func merged(_ lists: [[PendingOutOfBandOperation]]) -> [PendingOutOfBandOperation] {
        // One list (one backend, the common case) is used as it is: no copy of its operations.
        var all = lists.count == 1 ? lists[0] : Array(lists.joined())
        // A backend answers in creation order: a list already in order is not sorted again (the
        // sort is stable, so it would not move anything). Otherwise positions are sorted, not the
        // operations themselves, which are large to move.
        if all.indices.dropFirst().contains(where: { precedes(all[$0], all[$0 - 1]) }) {
            let order = all.indices.sorted { precedes(all[$0], all[$1]) }
            all = order.map { all[$0] }
        }
        // A duplicate repeats a token: without a repeated token (the common case) no redeem URL's
        // origin is needed, and the list is returned as it is.
        var tokens = Set<String>(minimumCapacity: all.count)
        guard all.contains(where: { !tokens.insert($0.token).inserted }) else { return all }
        var seen = Set<RedemptionIdentity>(minimumCapacity: all.count)
        // A backend's operations mostly share one redeem URL: its origin is parsed once per text.
        var origins: [String: String] = [:]
        return all.filter { operation in
            let redeemURL = operation.payload.redeemData.redeemUrl
            let origin = origins[redeemURL] ?? RedemptionIdentity.origin(ofRedeemURL: redeemURL)
            origins[redeemURL] = origin
            return seen.insert(RedemptionIdentity(origin: origin, token: operation.token)).inserted
        }
    }

    /// The order of ``merged(_:)``.
    private static func precedes(_ a: PendingOutOfBandOperation, _ b: PendingOutOfBandOperation) -> Bool {
        if a.creationTimeInEpochMillis != b.creationTimeInEpochMillis {
            return a.creationTimeInEpochMillis < b.creationTimeInEpochMillis
        }
        if a.server != b.server { return a.server < b.server }
        // Tokens as bytes, as identities compare them: two tokens Swift's strings call equal are
        // two operations, in an order that does not depend on the input's. Then the redeem URLs'
        // bytes, which order the same token at two origins as well as the origins would, without
        // parsing two URLs per comparison: a backend's answer of thousands of operations with one
        // token made a sort of URL parses.
        if !a.token.utf8.elementsEqual(b.token.utf8) { return a.token.utf8.lexicographicallyPrecedes(b.token.utf8) }
        return a.payload.redeemData.redeemUrl.utf8.lexicographicallyPrecedes(b.payload.redeemData.redeemUrl.utf8)
    }
}

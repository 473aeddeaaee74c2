/// Merging the operations of several backends into the one list the app sees.
public enum OperationOrdering {
    /// Sorted by creation time ascending (the latest last), ties broken by server then token so the
    /// order never depends on which backend answered first; duplicates by redeem token removed,
    /// keeping the earliest occurrence.
    public static func merged(_ lists: [[PendingOutOfBandOperation]]) -> [PendingOutOfBandOperation] {
        let all = lists.joined().sorted { a, b in
            if a.creationTimeInEpochMillis != b.creationTimeInEpochMillis {
                return a.creationTimeInEpochMillis < b.creationTimeInEpochMillis
            }
            if a.server != b.server { return a.server < b.server }
            return a.token < b.token
        }
        var seen = Set<String>()
        return all.filter { seen.insert($0.token).inserted }
    }
}

/// Merging the operations of several backends into the one list the app sees.
public enum OperationOrdering {
    /// Sorted by creation time ascending (the latest last), ties broken by server, token and
    /// origin so the order never depends on which backend answered first; duplicates by
    /// ``PendingOutOfBandOperation/identity`` removed (two registrations on one backend), keeping
    /// the earliest occurrence. The same token from two origins is two operations: both are kept.
    public static func merged(_ lists: [[PendingOutOfBandOperation]]) -> [PendingOutOfBandOperation] {
        let all = lists.joined().sorted { a, b in
            if a.creationTimeInEpochMillis != b.creationTimeInEpochMillis {
                return a.creationTimeInEpochMillis < b.creationTimeInEpochMillis
            }
            if a.server != b.server { return a.server < b.server }
            if a.token != b.token { return a.token < b.token }
            return a.identity.origin < b.identity.origin
        }
        var seen = Set<RedemptionIdentity>()
        // A backend's operations mostly share one redeem URL: its origin is parsed once per text.
        var origins: [String: String] = [:]
        return all.filter { operation in
            let redeemURL = operation.payload.redeemData.redeemUrl
            let origin = origins[redeemURL] ?? RedemptionIdentity.origin(ofRedeemURL: redeemURL)
            origins[redeemURL] = origin
            return seen.insert(RedemptionIdentity(origin: origin, token: operation.token)).inserted
        }
    }
}

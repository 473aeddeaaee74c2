/// Which fetched operations a coordinator may start, and which one it starts.
public enum OperationSelection {
    /// The operations that `policy` admits and that are neither redeemed nor in progress
    /// (`states`, by ``PendingOutOfBandOperation/identity``; one missing from it counts as unseen),
    /// by creation time ascending (stable: equal times keep their order), so the one to start is the last.
    public static func eligible(
        _ operations: [PendingOutOfBandOperation], policy: ChannelPolicy,
        states: [RedemptionIdentity: RedemptionState]
    ) -> [PendingOutOfBandOperation] {
        let admitted = operations.enumerated().filter { _, operation in
            policy.admits(operation.dispatchChannel) && (states[operation.identity] ?? .unseen) == .unseen
        }
        return admitted.sorted { a, b in
            a.element.creationTimeInEpochMillis != b.element.creationTimeInEpochMillis
                ? a.element.creationTimeInEpochMillis < b.element.creationTimeInEpochMillis
                : a.offset < b.offset
        }.map(\.element)
    }
}

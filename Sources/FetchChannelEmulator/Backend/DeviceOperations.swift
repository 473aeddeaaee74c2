/// One device's operations in the store: their tokens in dispatch order, and a count and the
/// size of their answer kept as operations come and go, so that a dispatch checks the device's
/// bounds without going through its list (which keeps expired operations until a purge or a
/// fetch drops them, an hour after their expiry).
///
/// They are of the operations that were neither redeemed nor expired at ``countedAt``: the
/// device's last recount, or its first dispatch. While the clock is not before ``countedAt``, the
/// operations pending now are among those counted, so a bound the totals do not reach is not
/// reached; and when no counted operation can have expired since (``earliestExpiry``), the totals
/// are the pending ones'. Only otherwise is the list gone through (``recount(at:in:)``).
struct DeviceOperations {
    /// In dispatch order: pending and expired operations, and redeemed ones until a recount or a
    /// fetch drops them (the store keeps their records, so that their tokens still answer as
    /// redeemed).
    private(set) var tokens: [String] = []
    private(set) var countedAt: Int64 = .min
    private(set) var count = 0
    /// The counted operations' shares of the answer (``StoredOperation/answerShare``).
    private(set) var answerShares = 0
    /// No counted operation expires before it. It may be earlier than any: a redemption leaves it.
    private(set) var earliestExpiry: Int64 = .max
    /// How often the list was gone through (for tests: a dispatch is checked without it).
    private(set) var recounts = 0

    /// Whether `operation` is among those counted.
    func counts(_ operation: StoredOperation) -> Bool {
        !operation.redeemed && operation.expiresAtMillis > countedAt
    }

    /// A bound of the device's pending operations.
    enum Bound: Equatable {
        /// It has `capacity` of them.
        case count
        /// With one more, its answer would be larger than ``OperationsAnswerSize/maximumJSONBytes``.
        case answerSize
    }

    /// The bound that `operation` would pass at `nowMillis`, or nil. Recounts first when the
    /// totals cannot tell: the clock is before the last recount (expired operations may be pending
    /// again), or they reach a bound and a counted operation may have expired.
    mutating func boundPassed(
        by operation: StoredOperation, capacity: Int, nowMillis: Int64, in operations: [String: StoredOperation]
    ) -> Bound? {
        if nowMillis < countedAt || (bound(adding: operation, capacity: capacity) != nil && earliestExpiry <= nowMillis)
        {
            recount(at: nowMillis, in: operations)
        }
        return bound(adding: operation, capacity: capacity)
    }

    private func bound(adding operation: StoredOperation, capacity: Int) -> Bound? {
        if count >= capacity { return .count }
        let answerBytes = OperationsAnswerSize.frameBytes + answerShares + operation.answerShare
        return answerBytes > OperationsAnswerSize.maximumJSONBytes ? .answerSize : nil
    }

    /// Lists `operation` last, and counts it unless it expired already.
    mutating func add(_ operation: StoredOperation) {
        tokens.append(operation.token)
        guard counts(operation) else { return }
        count += 1
        answerShares += operation.answerShare
        earliestExpiry = min(earliestExpiry, operation.expiresAtMillis)
    }

    /// Stops counting `operation`, as it is now: call it before it is marked redeemed.
    mutating func uncount(_ operation: StoredOperation) {
        guard counts(operation) else { return }
        count -= 1
        answerShares -= operation.answerShare
    }

    /// Forgets `stale`: operations the store no longer holds (a purge), or redeemed ones.
    mutating func forget(_ stale: [StoredOperation]) {
        for operation in stale { uncount(operation) }
        let tokens = Set(stale.map(\.token))
        self.tokens.removeAll { tokens.contains($0) }
    }

    /// Counts again at `nowMillis`, from the records in `operations`, and drops the redeemed
    /// operations from the list: whatever the clock does, they are never pending again.
    mutating func recount(at nowMillis: Int64, in operations: [String: StoredOperation]) {
        var (count, answerShares, earliestExpiry) = (0, 0, Int64.max)
        tokens.removeAll { token in
            guard let operation = operations[token], !operation.redeemed else { return true }
            if operation.expiresAtMillis > nowMillis {
                count += 1
                answerShares += operation.answerShare
                earliestExpiry = min(earliestExpiry, operation.expiresAtMillis)
            }
            return false
        }
        (countedAt, self.count, self.answerShares) = (nowMillis, count, answerShares)
        self.earliestExpiry = earliestExpiry
        recounts += 1
    }
}

/// What the fetch client does when a request fails because of the device clock.
public enum ClockSkewPolicy: Sendable, Hashable {
    /// Fail with `clockSkewTooBig` and let the person fix the clock (what the SDK does).
    case report
    /// Sign with device time + estimated offset and retry once, when the offset is at most
    /// `maximumOffsetMillis` in either direction; a larger one means the clock needs fixing, not hiding.
    case compensate(maximumOffsetMillis: Int64)

    public static let `default`: ClockSkewPolicy = .report

    /// An offset must move by more than this before a retry is worth it.
    public static let defaultRetryThresholdMillis: Int64 = 1_000

    /// Decides what to do with a classified answer. Pure: the fetch client supplies all state.
    ///
    /// `.report` never retries. `.compensate` retries exactly once, with the new offset, when all hold:
    /// this is not already a retry; a new offset is known; it differs from `signedWithOffsetMillis` by
    /// more than `thresholdMillis` (otherwise the retry would be signed the same way and fail the same
    /// way); and |new offset| ≤ `maximumOffsetMillis`. Any other skew is surfaced.
    ///
    /// - Parameters:
    ///   - signedWithOffsetMillis: the offset the failed request was signed with (0 if none).
    ///   - newEstimateMillis: the estimator's offset after this answer; when nil, the skew's measured
    ///     offset is used instead (a backend that sent `serverTimeInEpochMillis` but no `Date`).
    public func decision(
        for classification: ClockSkewClassification,
        signedWithOffsetMillis: Int64,
        newEstimateMillis: Int64?,
        isRetry: Bool,
        thresholdMillis: Int64 = ClockSkewPolicy.defaultRetryThresholdMillis
    ) -> ClockSkewDecision {
        guard let skew = classification.clockSkew else { return .notSkew }
        guard case .compensate(let maximumOffsetMillis) = self, !isRetry,
            let offset = newEstimateMillis ?? skew.measuredOffsetMillis,
            offset.magnitude <= UInt64(max(0, maximumOffsetMillis))
        else { return .surface(skew) }
        let (change, overflow) = offset.subtractingReportingOverflow(signedWithOffsetMillis)
        guard overflow || change.magnitude > UInt64(max(0, thresholdMillis)) else { return .surface(skew) }
        return .retry(withOffsetMillis: offset)
    }
}

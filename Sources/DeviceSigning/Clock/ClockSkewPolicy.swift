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
    /// `.report` never retries. `.compensate` retries exactly once, with a new offset, when all hold:
    /// this is not already a retry; a new offset is known; it differs from `signedWithOffsetMillis` by
    /// more than `thresholdMillis` (otherwise the retry would be signed the same way and fail the same
    /// way); and |new offset| ≤ `maximumOffsetMillis`. Any other skew is surfaced.
    ///
    /// The new offset is the estimate when it qualifies. When there is none, or it is allowed but
    /// would sign the retry as the failed request was signed, it is the skew's measured offset
    /// (the backend's own time for this very request). That matters when the estimate is stale:
    /// after the device clock was set right, its old samples still say "behind", the failed
    /// request was signed with that, and only the backend's measurement says where the clock is.
    /// An estimate beyond the maximum is surfaced, whatever the measurement.
    ///
    /// - Parameters:
    ///   - signedWithOffsetMillis: the offset the failed request was signed with (0 if none).
    ///   - newEstimateMillis: the estimator's offset after this answer (nil without samples, as
    ///     from a backend that sends `serverTimeInEpochMillis` but no `Date`).
    public func decision(
        for classification: ClockSkewClassification,
        signedWithOffsetMillis: Int64,
        newEstimateMillis: Int64?,
        isRetry: Bool,
        thresholdMillis: Int64 = ClockSkewPolicy.defaultRetryThresholdMillis
    ) -> ClockSkewDecision {
        guard let skew = classification.clockSkew else { return .notSkew }
        guard case .compensate(let maximumOffsetMillis) = self, !isRetry else { return .surface(skew) }
        func isAllowed(_ offset: Int64) -> Bool { offset.magnitude <= UInt64(max(0, maximumOffsetMillis)) }
        func signsDifferently(_ offset: Int64) -> Bool {
            let (change, overflow) = offset.subtractingReportingOverflow(signedWithOffsetMillis)
            return overflow || change.magnitude > UInt64(max(0, thresholdMillis))
        }
        if let estimate = newEstimateMillis {
            guard isAllowed(estimate) else { return .surface(skew) }  // the clock needs fixing
            if signsDifferently(estimate) { return .retry(withOffsetMillis: estimate) }
        }
        // No estimate, or one that would sign the retry as the failed request was signed.
        if let measured = skew.measuredOffsetMillis, isAllowed(measured), signsDifferently(measured) {
            return .retry(withOffsetMillis: measured)
        }
        return .surface(skew)
    }
}

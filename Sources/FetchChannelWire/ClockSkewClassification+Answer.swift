import DeviceSigning

extension ClockSkewClassification {
    /// The error code a backend uses for a creation time outside its tolerance.
    public static let clockSkewErrorCode = WireErrorCode.clockSkewTooBig

    /// Classifies one answer.
    ///
    /// - Definite: status ≥ 400 and a JSON body whose `errorCode` is `CLOCK_SKEW_TOO_BIG` (a 2xx or
    ///   3xx answer is never an error, whatever its body). Measured offset: `serverTimeInEpochMillis`
    ///   − `requestCreationMillis` when both are known and they are at most
    ///   ``plausibleOffsetMillis`` apart, else the estimate, else unknown.
    /// - Probable: status 401 or 403 and |estimate − signedWithOffsetMillis| > tolerance (exactly
    ///   at the tolerance is fine): the offset the request was still off by, after the
    ///   compensation it was signed with. Measured offset: the estimate.
    ///
    /// - Parameters:
    ///   - body: the answer's body; bodies over 64 KiB or not JSON count as having no error code.
    ///   - estimatedOffsetMillis: the estimator's offset for `server` after recording this answer's sample.
    ///   - requestCreationMillis: the device clock when the request was made, without any offset
    ///     applied (so that the result is the whole offset, comparable with the estimate).
    ///   - signedWithOffsetMillis: the compensation the request was signed with (0 without): a
    ///     request already signed with the estimate was not refused for the clock.
    public static func classify(
        status: Int,
        body: some Collection<UInt8>,
        estimatedOffsetMillis: Int64?,
        toleranceMillis: Int64,
        server: String,
        requestCreationMillis: Int64? = nil,
        signedWithOffsetMillis: Int64 = 0
    ) -> ClockSkewClassification {
        if status >= 400 {
            let errorBody = ErrorBody.parse(body)
            if errorBody.errorCode == clockSkewErrorCode.rawValue {
                var measured = estimatedOffsetMillis
                if let serverTime = errorBody.serverTimeInEpochMillis, let created = requestCreationMillis {
                    let (difference, overflow) = serverTime.subtractingReportingOverflow(created)
                    if !overflow, difference.magnitude <= UInt64(plausibleOffsetMillis) { measured = difference }
                }
                return .definite(
                    ClockSkew(
                        server: server, measuredOffsetMillis: measured,
                        toleranceMillis: toleranceMillis))
            }
        }
        if status == 401 || status == 403, let estimate = estimatedOffsetMillis,
            Self.residual(of: estimate, after: signedWithOffsetMillis) > UInt64(max(0, toleranceMillis))
        {
            return .probable(
                ClockSkew(
                    server: server, measuredOffsetMillis: estimate,
                    toleranceMillis: toleranceMillis))
        }
        return .notSkew
    }

    /// The farthest a backend's time may be from the device's and still be taken as a measurement:
    /// 200 years (a device clock reset to 1970 is some 56 years off). A `serverTimeInEpochMillis`
    /// farther off is no time at all, and a retry signed with it (`.compensate` without a real
    /// maximum) would overflow the signature's creation time.
    public static let plausibleOffsetMillis: Int64 = 200 * 366 * 86_400_000

    /// |estimate − signed offset|, exact for any two Int64 (the difference may exceed Int64).
    private static func residual(of estimate: Int64, after signedOffset: Int64) -> UInt64 {
        let (difference, overflow) = estimate.subtractingReportingOverflow(signedOffset)
        guard overflow else { return difference.magnitude }
        // Only values of opposite signs overflow: the distance is the sum of the magnitudes (< 2^64).
        return estimate.magnitude + signedOffset.magnitude
    }
}

/// The outcome of ``ClockSkewPolicy/decision(for:signedWithOffsetMillis:newEstimateMillis:isRetry:thresholdMillis:)``.
public enum ClockSkewDecision: Sendable, Hashable {
    /// Fail the request with `clockSkewTooBig`.
    case surface(ClockSkew)
    /// Make a new request (new requestId, new signature) with creation time = device time + this offset.
    case retry(withOffsetMillis: Int64)
    /// The answer has nothing to do with the clock: handle it as usual.
    case notSkew
}

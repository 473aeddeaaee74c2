import DeviceSigning

/// How a ``FetchClient`` fetches.
public struct FetchClientConfiguration: Sendable, Hashable {
    /// Per request (each retry has its own): no complete answer by then is `networkError(timedOut)`.
    /// At most one day: a longer one is cut to a day.
    public var requestTimeout: Duration
    /// `.report` (default, as the SDK) or `.compensate(maximumOffsetMillis:)`: see ``FetchClient``.
    public var clockSkewPolicy: ClockSkewPolicy
    /// A compensated retry is made only when the offset moved by more than this.
    public var retryThresholdMillis: Int64

    public init(
        requestTimeout: Duration = .seconds(15), clockSkewPolicy: ClockSkewPolicy = .default,
        retryThresholdMillis: Int64 = ClockSkewPolicy.defaultRetryThresholdMillis
    ) {
        self.requestTimeout = requestTimeout
        self.clockSkewPolicy = clockSkewPolicy
        self.retryThresholdMillis = retryThresholdMillis
    }
}

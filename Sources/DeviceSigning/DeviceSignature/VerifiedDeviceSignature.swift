/// A `Device-Signature` that passed every check of `DeviceSignatureVerifier`.
public struct VerifiedDeviceSignature: Sendable, Hashable {
    /// The JWS `kid`, equal to the payload's `dispatchTargetId`.
    public let dispatchTargetId: String
    public let requestId: String
    /// The payload's `creationTimeInEpochMillis`.
    public let creationTimeMillis: Int64
    /// The verifier's clock when the signature was checked.
    public let serverTimeMillis: Int64

    /// creation time minus server time (positive: the device clock is ahead). Within the
    /// tolerance, so it never overflows for an accepted signature with a sane tolerance.
    public var skewMillis: Int64 {
        let (difference, overflow) = creationTimeMillis.subtractingReportingOverflow(serverTimeMillis)
        return overflow ? (creationTimeMillis > serverTimeMillis ? .max : .min) : difference
    }

    public init(dispatchTargetId: String, requestId: String, creationTimeMillis: Int64, serverTimeMillis: Int64) {
        self.dispatchTargetId = dispatchTargetId
        self.requestId = requestId
        self.creationTimeMillis = creationTimeMillis
        self.serverTimeMillis = serverTimeMillis
    }
}

import DeviceSigning

/// How the backend answers a refused Device-Signature (docs/ARCHITECTURE.md, "Wire contract"):
/// the verifier's rejections are values; their codes and statuses are the wire's.
extension DeviceSignatureRejection: CustomStringConvertible {
    /// The stable machine-readable code: the `errorCode` of the backend's error body.
    public var code: String { wireCode.rawValue }

    /// ``code`` in the wire's vocabulary.
    public var wireCode: WireErrorCode {
        switch self {
        case .malformed: .malformedRequest
        case .unknownDispatchTarget: .unknownDispatchTarget
        case .invalidSignature: .invalidSignature
        case .clockSkewTooBig: .clockSkewTooBig
        case .replayedRequest: .replayedRequest
        case .replayCacheFull: .replayCacheFull
        case .replayQuotaExceeded: .replayQuotaExceeded
        }
    }

    /// The HTTP status the backend answers with: 400 for a malformed header, 401 for a signature
    /// that is not accepted, 429 (with `Retry-After`) for a dispatch target over its quota, 503
    /// for a full cache.
    public var httpStatus: HTTPStatus {
        switch self {
        case .malformed: .badRequest
        case .unknownDispatchTarget, .invalidSignature, .clockSkewTooBig, .replayedRequest: .unauthorized
        case .replayQuotaExceeded: .tooManyRequests
        case .replayCacheFull: .serviceUnavailable
        }
    }

    public var description: String { "\(code): \(reason)" }
}

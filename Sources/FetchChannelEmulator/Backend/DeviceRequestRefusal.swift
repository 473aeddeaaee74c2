import DeviceSigning
import FetchChannelWire

/// Why the backend refused to authenticate a device request: the verifier's rejection of its
/// Device-Signature, or the backend's own check of who signed it.
///
/// Two views of one refusal: `code`, the internal reason the statistics count, and `response`, the
/// answer on the wire. The wire answer does not tell an unauthenticated caller whether a dispatch
/// target exists (docs/ARCHITECTURE.md, "Wire contract"): an unknown dispatch
/// target answers exactly as a signature that does not verify, 401 `INVALID_SIGNATURE`.
enum DeviceRequestRefusal: Error, Sendable {
    /// The verifier refused the Device-Signature.
    case rejected(DeviceSignatureRejection)
    /// No Device-Signature field, or more than one: 400 `MALFORMED_REQUEST`.
    case malformedHeader(String)
    /// A further dispatch target for a device that has one, requested without a signature:
    /// 401 `INVALID_SIGNATURE`.
    case signatureRequired(deviceId: String)
    /// Validly signed, but by a dispatch target the request may not use (another device's, or
    /// another target than the one in the path): 401 `INVALID_SIGNATURE`.
    case foreignDispatchTarget(String)

    /// The internal code: the verifier's rejection code, `MALFORMED_REQUEST`, `SIGNATURE_REQUIRED`
    /// or `FOREIGN_DISPATCH_TARGET`.
    var code: String {
        switch self {
        case .rejected(let rejection): rejection.code
        case .malformedHeader: WireErrorCode.malformedRequest
        case .signatureRequired: WireErrorCode.signatureRequired
        case .foreignDispatchTarget: WireErrorCode.foreignDispatchTarget
        }
    }

    var response: HTTPResponse {
        switch self {
        case .rejected(.unknownDispatchTarget):
            return BackendResponses.rejection(.invalidSignature)
        case .rejected(let rejection):
            return BackendResponses.rejection(rejection)
        case .malformedHeader(let message):
            return BackendResponses.malformed(message)
        case .signatureRequired(let deviceId):
            let message =
                "Device \(deviceId.prefix(64)) already has a dispatch target; request another one "
                + "with a Device-Signature of one of the device's dispatch targets."
            return BackendResponses.rejection(.invalidSignature, message: message)
        case .foreignDispatchTarget(let message):
            return BackendResponses.rejection(.invalidSignature, message: message)
        }
    }
}

import DeviceSigning
import FetchChannelWire

/// Why the backend refused to authenticate a device request: the verifier's rejection of its
/// Device-Signature, or the backend's own check of who signed it.
///
/// Two views of one refusal: `code`, the internal reason the statistics count, and `response`, the
/// answer on the wire. The wire answer does not tell an unauthenticated caller whether a dispatch
/// target exists (docs/ARCHITECTURE.md, "Wire contract"): an unknown dispatch
/// target answers exactly as a signature that does not verify, 401 `INVALID_SIGNATURE`.
struct DeviceRequestRefusal: CodedError {
    /// The internal code: the verifier's rejection code, or one of the backend's own below.
    struct Code: ErrorCode {
        let rawValue: String

        /// No Device-Signature field, or more than one.
        static let malformedRequest = Code(rawValue: WireErrorCode.malformedRequest.rawValue)
        /// A further dispatch target requested without a signature.
        static let signatureRequired = Code(rawValue: WireErrorCode.signatureRequired.rawValue)
        /// Signed by a dispatch target the request may not use.
        static let foreignDispatchTarget = Code(rawValue: WireErrorCode.foreignDispatchTarget.rawValue)
    }

    let code: Code
    /// The message the answer carries.
    let reason: String
    /// The answer on the wire.
    let response: HTTPResponse

    private init(_ code: Code, _ reason: String, _ response: HTTPResponse) {
        self.code = code
        self.reason = reason
        self.response = response
    }

    /// The verifier refused the Device-Signature (an unknown dispatch target answers as an invalid
    /// signature).
    static func rejected(_ rejection: DeviceSignatureRejection) -> DeviceRequestRefusal {
        let answered: DeviceSignatureRejection =
            if case .unknownDispatchTarget = rejection { .invalidSignature } else { rejection }
        return DeviceRequestRefusal(
            Code(rawValue: rejection.code), rejection.reason, BackendResponses.rejection(answered))
    }

    /// No Device-Signature field, or more than one: 400 `MALFORMED_REQUEST`.
    static func malformedHeader(_ message: String) -> DeviceRequestRefusal {
        DeviceRequestRefusal(.malformedRequest, message, BackendResponses.malformed(message))
    }

    /// A further dispatch target for a device that has one, requested without a signature:
    /// 401 `INVALID_SIGNATURE`.
    static func signatureRequired(deviceId: String) -> DeviceRequestRefusal {
        let message =
            "Device \(deviceId.prefix(64)) already has a dispatch target; request another one "
            + "with a Device-Signature of one of the device's dispatch targets."
        return DeviceRequestRefusal(
            .signatureRequired, message, BackendResponses.rejection(.invalidSignature, message: message))
    }

    /// Validly signed, but by a dispatch target the request may not use (another device's, or
    /// another target than the one in the path): 401 `INVALID_SIGNATURE`.
    static func foreignDispatchTarget(_ message: String) -> DeviceRequestRefusal {
        DeviceRequestRefusal(
            .foreignDispatchTarget, message, BackendResponses.rejection(.invalidSignature, message: message))
    }
}

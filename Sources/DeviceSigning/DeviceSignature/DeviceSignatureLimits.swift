/// The limits of the Device-Signature profile, shared by the signer and the verifier.
///
/// Lengths of identifiers are counted in UTF-16 code units, as the backend (a JVM service) counts
/// `String.length()`. A string within the limit in UTF-16 is within it by every other count
/// (Unicode scalars, characters), so what the signer accepts the backend accepts too.
public enum DeviceSignatureLimits {
    /// The longest dispatch target id (the JWS `kid` and the payload's `dispatchTargetId`).
    public static let maximumDispatchTargetIdLength = 256
    /// The longest request id (docs/ARCHITECTURE.md, "Wire contract").
    public static let maximumRequestIdLength = 64
    /// The longest `Device-Signature` header value, in bytes.
    public static let maximumHeaderValueBytes = 16 * 1024
    /// The largest protected header JSON, in bytes (decoded).
    public static let maximumHeaderJSONBytes = 1024
    /// The largest payload JSON, in bytes (decoded).
    public static let maximumPayloadJSONBytes = 4 * 1024

    /// Why `id` is not a valid dispatch target id, or nil if it is one.
    package static func dispatchTargetIdProblem(_ id: String) -> String? {
        let length = id.utf16.count
        if length == 0 { return "The dispatch target id is empty." }
        if length > maximumDispatchTargetIdLength {
            return
                "The dispatch target id is \(length) UTF-16 code units long; at most \(maximumDispatchTargetIdLength) are allowed."
        }
        if let control = id.unicodeScalars.first(where: isControl) {
            return
                "The dispatch target id contains the control character U+\(hex4(control.value)); control characters are not allowed."
        }
        return nil
    }

    /// Why `id` is not a valid request id, or nil if it is one.
    package static func requestIdProblem(_ id: String) -> String? {
        let length = id.utf16.count
        if length == 0 { return "The request id is empty." }
        if length > maximumRequestIdLength {
            return "The request id is \(length) UTF-16 code units long; at most \(maximumRequestIdLength) are allowed."
        }
        return nil
    }

    /// Unicode general category Cc: C0 controls, DEL and C1 controls.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

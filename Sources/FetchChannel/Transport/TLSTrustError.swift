import DeviceSigning

/// A ``TLSTrust`` could not be made from what was given. Equal when the codes are.
public struct TLSTrustError: CodedError {
    public struct Code: ErrorCode {
        public let rawValue: String

        /// A pin is not `sha256//` + the base64 of 32 bytes, or there are too many.
        public static let invalidPin = Code(rawValue: "invalidPin")
        /// The in-memory CA bundle is too large or holds no PEM certificate.
        public static let invalidCABundle = Code(rawValue: "invalidCABundle")
        /// The CA file path is empty or not a C string.
        public static let invalidCAFile = Code(rawValue: "invalidCAFile")
    }

    public let code: Code
    /// What was wrong and how to write it instead.
    public let reason: String

    public init(_ code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }
}

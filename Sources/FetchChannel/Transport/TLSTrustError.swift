/// A ``TLSTrust`` could not be made from what was given.
public struct TLSTrustError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// A pin is not `sha256//` + the base64 of 32 bytes, or there are too many.
        case invalidPin
        /// The in-memory CA bundle is too large or holds no PEM certificate.
        case invalidCABundle
        /// The CA file path is empty or not a C string.
        case invalidCAFile
    }

    public let code: Code
    /// What was wrong and how to write it instead.
    public let reason: String

    public init(_ code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code.rawValue): \(reason)" }
}

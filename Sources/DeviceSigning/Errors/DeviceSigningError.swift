/// An error of the device-signing core: a stable `code` for programs, a `reason` for people, and
/// for OpenSSL failures the drained OpenSSL error queue.
///
/// Equality compares the code only, so tests and callers can match on the kind of failure.
/// No error ever carries key material: reasons are written by this package, and OpenSSL's queue
/// holds library, function and reason strings, never key bytes.
public struct DeviceSigningError: CodedError {
    /// A stable, machine-readable error kind. New codes may be added; match on the ones you handle.
    public struct Code: ErrorCode {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }

        /// Bytes that are not a well-formed encoding of what was asked for (DER, PEM, JWK, base64).
        public static let malformedEncoding = Code("malformedEncoding")
        /// A well-formed key that is not a usable P-256 key (scalar out of range, point off the curve).
        public static let invalidKey = Code("invalidKey")
        /// A key of another algorithm (RSA, Ed25519, ...).
        public static let unsupportedKeyType = Code("unsupportedKeyType")
        /// An EC key on a curve other than P-256.
        public static let unsupportedCurve = Code("unsupportedCurve")
        /// A signature encoding of the wrong size or not strict DER.
        public static let malformedSignature = Code("malformedSignature")
        /// An encrypted key that the passphrase does not open.
        public static let wrongPassphrase = Code("wrongPassphrase")
        /// An input larger than the limit for its kind.
        public static let inputTooLarge = Code("inputTooLarge")
        /// A JWS that is not a well-formed ES256 compact serialization.
        public static let malformedJWS = Code("malformedJWS")
        /// A JWS whose `alg` is not ES256.
        public static let unsupportedAlgorithm = Code("unsupportedAlgorithm")
        /// A JWS whose signature does not verify.
        public static let invalidSignature = Code("invalidSignature")
        /// A key store entry that does not exist.
        public static let keyNotFound = Code("keyNotFound")
        /// A key store file that is truncated, garbled or inconsistent with its metadata.
        public static let corruptKeyFile = Code("corruptKeyFile")
        /// A key store file or directory with unsafe ownership, type or permissions.
        public static let insecureKeyFile = Code("insecureKeyFile")
        /// A key store operation that needs a passphrase got none (or an empty one).
        public static let passphraseRequired = Code("passphraseRequired")
        /// A file-system operation failed.
        public static let fileSystem = Code("fileSystem")
        /// OpenSSL failed where it should not have (allocation, provider, internal error).
        public static let openSSLFailure = Code("openSSLFailure")
    }

    public let code: Code
    /// What happened and, where there is something to do, what to do about it.
    public let reason: String
    /// The OpenSSL error queue at the time of failure, oldest first (empty if not from OpenSSL).
    public let openSSLErrors: [String]

    public init(_ code: Code, _ reason: String, openSSLErrors: [String] = []) {
        self.code = code
        self.reason = reason
        self.openSSLErrors = openSSLErrors
    }

    public var description: String {
        openSSLErrors.isEmpty ? "\(code): \(reason)" : "\(code): \(reason) [\(openSSLErrors.joined(separator: "; "))]"
    }
}

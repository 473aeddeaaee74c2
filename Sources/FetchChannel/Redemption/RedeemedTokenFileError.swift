import DeviceSigning

/// The redeemed-token file could not be read or written. Equal when the codes are.
public struct RedeemedTokenFileError: CodedError {
    public struct Code: ErrorCode {
        public let rawValue: String

        /// The file's name or directory is not usable (not a plain file name, not a file URL).
        public static let invalidLocation = Code(rawValue: "invalidLocation")
        /// The file was written by another version of this package, one this version cannot read.
        public static let unsupportedVersion = Code(rawValue: "unsupportedVersion")
        /// The file is not a redeemed-token list written by this package.
        public static let corrupt = Code(rawValue: "corrupt")
        /// The file or its directory has unsafe ownership, type or permissions.
        public static let insecure = Code(rawValue: "insecure")
        /// Reading, writing or locking the file failed.
        public static let fileSystem = Code(rawValue: "fileSystem")
    }

    public let code: Code
    /// The file concerned.
    public let path: String
    /// What went wrong and what to do about it.
    public let reason: String

    public init(_ code: Code, path: String, reason: String) {
        self.code = code
        self.path = path
        self.reason = reason
    }

    public var description: String { "Redeemed-token file \(path): \(reason)" }
}

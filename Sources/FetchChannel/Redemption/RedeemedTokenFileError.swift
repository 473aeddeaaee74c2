/// The redeemed-token file could not be read or written.
public struct RedeemedTokenFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file concerned.
    public let path: String
    /// What went wrong and what to do about it.
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "Redeemed-token file \(path): \(reason)" }
}

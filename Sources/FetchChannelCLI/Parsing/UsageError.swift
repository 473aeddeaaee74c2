/// A command line that cannot be run as typed: exit status 64 (EX_USAGE), the message, the
/// command's usage line and a pointer to its help, all on standard error.
public struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

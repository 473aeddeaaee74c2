/// A command that could not do its job: `Error: <message>` on standard error and exit status 1.
/// The message says what happened and, where there is something to do, what to do.
public struct CLIFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// The exit statuses of `fetchchannel`.
public enum ExitCode: Sendable {
    public static let success: Int32 = 0
    /// A runtime failure: `Error: …` on standard error.
    public static let failure: Int32 = 1
    /// Some backends answered and some failed (fetch).
    public static let partial: Int32 = 2
    /// The command line cannot be run as typed (EX_USAGE).
    public static let usage: Int32 = 64
}

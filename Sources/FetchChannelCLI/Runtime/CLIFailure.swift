/// A command that could not do its job: `Error: <message>` on standard error and exit status 1.
/// The message says what happened and, where there is something to do, what to do.
package typealias CLIFailure = CLIError<RuntimeFailure>

/// The kind of `CLIFailure`.
package enum RuntimeFailure: CLIErrorKind {}

/// The exit statuses of `fetchchannel`.
package enum ExitCode: Sendable {
    package static let success: Int32 = 0
    /// A runtime failure: `Error: …` on standard error.
    package static let failure: Int32 = 1
    /// Some backends answered and some failed (fetch).
    package static let partial: Int32 = 2
    /// The command line cannot be run as typed (EX_USAGE).
    package static let usage: Int32 = 64
}

/// A command line that cannot be run as typed: exit status 64 (EX_USAGE), the message, the
/// command's usage line and a pointer to its help, all on standard error.
package typealias UsageError = CLIError<CommandLineUsage>

/// The kind of `UsageError`.
package enum CommandLineUsage: CLIErrorKind {}

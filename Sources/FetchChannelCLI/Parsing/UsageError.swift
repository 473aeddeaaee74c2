/// A command line that cannot be run as typed: exit status 64 (EX_USAGE), the message, the
/// command's usage line and a pointer to its help, all on standard error.
package typealias UsageError = CLIError<CommandLineUsage>

/// The kind of `UsageError`.
package enum CommandLineUsage: CLIErrorKind {}

extension CLIError.Code where Kind == CommandLineUsage {
    /// No command, or a command or subcommand this tool does not have.
    package static var unknownCommand: Self { Self("unknownCommand") }
    /// An option the command does not have, or one before the command.
    package static var unknownOption: Self { Self("unknownOption") }
    /// An option that would carry a passphrase on the command line.
    package static var secretOnCommandLine: Self { Self("secretOnCommandLine") }
    /// A non-repeatable option given twice, a flag given a value, an option without its value.
    package static var malformedOption: Self { Self("malformedOption") }
    /// A required option that is missing.
    package static var missingOption: Self { Self("missingOption") }
    /// Too few or too many positional arguments.
    package static var wrongArgumentCount: Self { Self("wrongArgumentCount") }
    /// A value the option or argument does not accept.
    package static var invalidValue: Self { Self("invalidValue") }
    /// Options that do not go together, or one that needs another.
    package static var conflictingOptions: Self { Self("conflictingOptions") }
    /// A passphrase is needed and there is no way to ask for it.
    package static var passphraseUnavailable: Self { Self("passphraseUnavailable") }
}

/// A command line that cannot be run as typed: exit status 64 (EX_USAGE), the message, the
/// command's usage line and a pointer to its help, all on standard error.
///
/// The package's error style (as `DeviceSigningError`): a stable `code` for programs and tests,
/// a `message` for people; equality compares the code only.
package struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable kind of usage error. New codes may be added.
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        package let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        /// No command, or a command or subcommand this tool does not have.
        package static let unknownCommand = Code("unknownCommand")
        /// An option the command does not have, or one before the command.
        package static let unknownOption = Code("unknownOption")
        /// An option that would carry a passphrase on the command line.
        package static let secretOnCommandLine = Code("secretOnCommandLine")
        /// A non-repeatable option given twice, a flag given a value, an option without its value.
        package static let malformedOption = Code("malformedOption")
        /// A required option that is missing.
        package static let missingOption = Code("missingOption")
        /// Too few or too many positional arguments.
        package static let wrongArgumentCount = Code("wrongArgumentCount")
        /// A value the option or argument does not accept.
        package static let invalidValue = Code("invalidValue")
        /// Options that do not go together, or one that needs another.
        package static let conflictingOptions = Code("conflictingOptions")
        /// A passphrase is needed and there is no way to ask for it.
        package static let passphraseUnavailable = Code("passphraseUnavailable")
    }

    package let code: Code
    /// What is wrong with the command line and, where there is something to do, what to do.
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }

    package static func == (lhs: UsageError, rhs: UsageError) -> Bool { lhs.code == rhs.code }
    package func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

/// The codes of the command line's errors, in one list: a code names what went wrong, the kind of
/// the error (`UsageError` or `CLIFailure`) says whether it was the command line (exit 64) or the
/// work (exit 1).
extension CLIError.Code {
    // Usage errors: the command line cannot be run as typed.

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

    // Runtime failures: the command could not do its job.

    /// The key store, or the key asked for, is missing, ambiguous or not in the needed state.
    package static var keyStore: Self { Self("keyStore") }
    /// A file or standard input that cannot be read, or does not hold what it should.
    package static var unreadableInput: Self { Self("unreadableInput") }
    /// A passphrase that is wrong, empty, or in a file that is unsafe or unreadable.
    package static var passphrase: Self { Self("passphrase") }
    /// Output that is refused where it would go (binary or a secret to a terminal) or cannot
    /// be written.
    package static var refusedOutput: Self { Self("refusedOutput") }
    /// A private key that cannot leave its TPM.
    package static var hardwareBound: Self { Self("hardwareBound") }
    /// No usable answer from a backend, or an answer that refuses or does not confirm.
    package static var backend: Self { Self("backend") }
    /// The device clock is too far from the backend's.
    package static var clockSkew: Self { Self("clockSkew") }
    /// A walkthrough step (the demo), a measurement (bench) or a vector check that did not go as
    /// it should.
    package static var unexpectedOutcome: Self { Self("unexpectedOutcome") }
    /// A state this tool should never reach.
    package static var internalError: Self { Self("internalError") }
}

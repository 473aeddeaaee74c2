/// A command that could not do its job: `Error: <message>` on standard error and exit status 1.
/// The message says what happened and, where there is something to do, what to do.
package typealias CLIFailure = CLIError<RuntimeFailure>

/// The kind of `CLIFailure`.
package enum RuntimeFailure: CLIErrorKind {}

extension CLIError.Code where Kind == RuntimeFailure {
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
    /// A walkthrough step (the demo) or a measurement (bench) that did not go as it should.
    package static var unexpectedOutcome: Self { Self("unexpectedOutcome") }
    /// A state this tool should never reach.
    package static var internalError: Self { Self("internalError") }
}

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

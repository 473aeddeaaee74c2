/// A command that could not do its job: `Error: <message>` on standard error and exit status 1.
/// The message says what happened and, where there is something to do, what to do.
///
/// The package's error style (as `DeviceSigningError`): a stable `code` for programs and tests,
/// a `message` for people; equality compares the code only. No message carries key material.
package struct CLIFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable kind of failure. New codes may be added.
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        package let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        /// The key store, or the key asked for, is missing, ambiguous or not in the needed state.
        package static let keyStore = Code("keyStore")
        /// A file or standard input that cannot be read, or does not hold what it should.
        package static let unreadableInput = Code("unreadableInput")
        /// A passphrase that is wrong, empty, or in a file that is unsafe or unreadable.
        package static let passphrase = Code("passphrase")
        /// Output that is refused where it would go (binary or a secret to a terminal) or cannot
        /// be written.
        package static let refusedOutput = Code("refusedOutput")
        /// A private key that cannot leave its TPM.
        package static let hardwareBound = Code("hardwareBound")
        /// No usable answer from a backend, or an answer that refuses or does not confirm.
        package static let backend = Code("backend")
        /// The device clock is too far from the backend's.
        package static let clockSkew = Code("clockSkew")
        /// A walkthrough step (the demo) or a measurement (bench) that did not go as it should.
        package static let unexpectedOutcome = Code("unexpectedOutcome")
        /// A state this tool should never reach.
        package static let internalError = Code("internalError")
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }

    package static func == (lhs: CLIFailure, rhs: CLIFailure) -> Bool { lhs.code == rhs.code }
    package func hash(into hasher: inout Hasher) { hasher.combine(code) }
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

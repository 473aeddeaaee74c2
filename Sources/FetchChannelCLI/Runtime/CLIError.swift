/// An error of the command line, in the package's one error style (as `DeviceSigningError`): a
/// stable `code` for programs and tests and a `message` for people; equality compares the code
/// only. `Kind` tells a usage error (`UsageError`, exit 64) from a runtime failure (`CLIFailure`,
/// exit 1); no message carries key material.
package struct CLIError<Kind: CLIErrorKind>: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, machine-readable error kind. New codes may be added; match on the ones you handle.
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        package let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }
    }

    package let code: Code
    /// What happened and, where there is something to do, what to do about it.
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }

    package static func == (lhs: CLIError, rhs: CLIError) -> Bool { lhs.code == rhs.code }
    package func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

/// Which of the command line's two kinds of error a `CLIError` is.
package protocol CLIErrorKind: Sendable {}

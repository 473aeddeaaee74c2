/// A command of the tool: what it accepts and what it does. `run` returns the exit status, or
/// throws a `UsageError` (exit 64) or a runtime failure (exit 1).
struct Command: Sendable {
    let spec: CommandSpec
    let run: @Sendable (Invocation) async throws -> Int32
}

/// One run of a command: its parsed arguments and its surroundings.
struct Invocation: Sendable {
    let spec: CommandSpec
    let arguments: ParsedArguments
    let context: CLIContext

    var standardOutput: OutputChannel { context.standardOutput }
    var standardError: OutputChannel { context.standardError }
    var json: Bool { arguments.flag("json") }

    /// Writes a diagnostic line to standard error.
    func note(_ text: String) {
        standardError.line(text)
    }

    var passphrases: PassphraseResolver {
        PassphraseResolver(arguments: arguments, context: context)
    }
}

/// Options several commands share.
enum CommonOptions {
    static let json = OptionSpec.flag("json", help: "Print machine-readable JSON on standard output.")
    static let store = OptionSpec.value(
        "store", "DIR",
        help:
            "The key store directory (default: $XDG_DATA_HOME/fetchchannel/keys, else ~/.local/share/fetchchannel/keys)."
    )
    static let passphraseFile = PassphraseResolver.option
}

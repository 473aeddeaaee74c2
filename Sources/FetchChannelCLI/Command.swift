/// A command of the tool: what it accepts and what it does. `run` returns the exit status, or
/// throws a `UsageError` (exit 64) or a runtime failure (exit 1).
struct Command: Sendable {
    let spec: CommandSpec
    let run: @Sendable (Invocation) async throws -> Int32

    init(spec: CommandSpec, run: @escaping @Sendable (Invocation) async throws -> Int32) {
        self.spec = spec
        self.run = run
    }

    init<Typed: CLICommand>(_ type: Typed.Type) {
        self.spec = Typed.spec
        self.run = { invocation in try await Typed(invocation.arguments, context: invocation.context).run() }
    }
}

/// One run of a command: its parsed arguments and its surroundings.
struct Invocation: Sendable {
    let spec: CommandSpec
    let arguments: ParsedArguments
    let context: CLIContext

    var standardOutput: OutputChannel { context.standardOutput }
    var standardError: OutputChannel { context.standardError }
    var json: Bool { arguments[CommonOptions.json] }

    /// Writes a diagnostic line to standard error.
    func note(_ text: String) {
        standardError.line(text)
    }

    var passphrases: PassphraseResolver {
        PassphraseResolver(file: try? arguments[CommonOptions.passphraseFile], context: context)
    }
}

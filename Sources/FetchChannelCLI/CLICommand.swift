/// A command of the tool as a type (docs/ARCHITECTURE.md, "CLI conventions"): its spec, a parse step that
/// turns the parsed arguments into the command's typed inputs, and a run step that does the work.
///
/// The parse step raises every usage error the arguments alone reveal (exit 64), before anything
/// is touched; the run step returns the exit status or throws a runtime failure (exit 1). A
/// usage error the run step finds later (a passphrase that cannot be asked for) is reported the
/// same way.
protocol CLICommand: Sendable {
    /// What the command accepts; its options are the command's typed declarations.
    static var spec: CommandSpec { get }

    /// The parse step: reads every option through its declaration.
    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError)

    /// The run step.
    func run() async throws -> Int32
}

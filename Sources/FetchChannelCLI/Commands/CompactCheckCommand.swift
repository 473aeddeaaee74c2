import Foundation

/// A command that checks one compact serialization with a key from a file (`verify`, `decrypt`):
/// the parse and run steps are the same, only the key and the opening differ.
protocol CompactCheckCommand: CLICommand {
    /// The key the key file holds.
    associatedtype Key: KeyFileContents
    /// The key file option, required.
    static var keyFile: Option<String> { get }
    static var serialization: CompactCheck.Serialization { get }
    /// The positional argument and the key file, parsed.
    var check: CompactCheck { get }
    init(check: CompactCheck)

    /// Parses and checks the compact serialization; a `DeviceSigningError` is its refusal.
    static func open(_ compact: String, with key: Key) throws -> CompactCheck.Passed
}

extension CompactCheckCommand {
    /// The spec of such a command: the key file, `--json`, and the compact serialization as its
    /// one argument.
    static func checkSpec(path: [String], abstract: String, discussion: String) -> CommandSpec {
        CommandSpec(
            path: path, abstract: abstract, discussion: discussion, options: [keyFile, CommonOptions.json],
            positionals: [serialization.argument])
    }

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        self.init(check: try CompactCheck(Self.serialization, arguments, keyFile: Self.keyFile, context: context))
    }

    func run() async throws -> Int32 {
        let key: Key
        do {
            key = try Key(readingKeyFile: check.keyFile)
        } catch let failure as CLIFailure {
            check.refuse(failure)
            return ExitCode.failure
        }
        guard let passed = try check.run({ try Self.open($0, with: key) }) else { return ExitCode.failure }
        return try check.report(passed)
    }
}

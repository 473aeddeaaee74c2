/// The arguments of one command after strict parsing: which flags were given, the values of
/// each option (in order) and the positional arguments.
public struct ParsedArguments: Sendable, Hashable {
    public var flags: Set<String> = []
    public var values: [String: [String]] = [:]
    public var positionals: [String] = []

    public init(flags: Set<String> = [], values: [String: [String]] = [:], positionals: [String] = []) {
        self.flags = flags
        self.values = values
        self.positionals = positionals
    }

    /// Whether the flag `--name` was given.
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `--name`, if given (the option is not repeatable, so there is at most one).
    public func value(_ name: String) -> String? { values[name]?.last }

    /// Every value of a repeatable `--name`, in order.
    public func allValues(_ name: String) -> [String] { values[name] ?? [] }
}

/// What the parser found: arguments to run with, or a request for help or the version.
public enum ParseOutcome: Sendable, Hashable {
    case arguments(ParsedArguments)
    case help
    case version
}

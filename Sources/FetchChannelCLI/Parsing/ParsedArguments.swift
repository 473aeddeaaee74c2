/// The arguments of one command after strict parsing: which flags were given, the values of
/// each option (in order) and the positional arguments.
package struct ParsedArguments: Sendable, Hashable {
    package var flags: Set<String> = []
    package var values: [String: [String]] = [:]
    package var positionals: [String] = []

    package init(flags: Set<String> = [], values: [String: [String]] = [:], positionals: [String] = []) {
        self.flags = flags
        self.values = values
        self.positionals = positionals
    }

    /// Whether the flag `--name` was given.
    package func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `--name`, if given (the option is not repeatable, so there is at most one).
    package func value(_ name: String) -> String? { values[name]?.last }

    /// Every value of a repeatable `--name`, in order.
    package func allValues(_ name: String) -> [String] { values[name] ?? [] }
}

/// What the parser found: arguments to run with, or a request for help or the version.
package enum ParseOutcome: Sendable, Hashable {
    case arguments(ParsedArguments)
    case help
    case version
}

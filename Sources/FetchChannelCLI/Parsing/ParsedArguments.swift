/// The arguments of one command after strict parsing: which flags were given, the values of
/// each option (in order) and the positional arguments. Commands read them through their typed
/// declarations (`arguments[Self.server]`), never by an option's name.
package struct ParsedArguments: Sendable, Hashable {
    package var flags: Set<String> = []
    package var values: [String: [String]] = [:]
    package var positionals: [String] = []

    package init(flags: Set<String> = [], values: [String: [String]] = [:], positionals: [String] = []) {
        self.flags = flags
        self.values = values
        self.positionals = positionals
    }

    /// Whether the flag was given.
    package subscript(flag: Flag) -> Bool { flags.contains(flag.spec.name) }

    /// Whether the option was given at all (its value unread).
    package func contains<Value>(_ option: Option<Value>) -> Bool { values[option.spec.name] != nil }

    /// The value of the option, if given (the option is not repeatable, so there is at most one).
    package subscript<Value>(option: Option<Value>) -> Value? {
        get throws(UsageError) {
            guard let text = values[option.spec.name]?.last else { return nil }
            return try option.parse(text)
        }
    }

    /// The value of an option the parser already required (the spec says `required: true`).
    package func required<Value>(_ option: Option<Value>) throws(UsageError) -> Value {
        guard let value = try self[option] else {
            throw UsageError(.missingOption, "missing option '--\(option.spec.name)'")
        }
        return value
    }

    /// Every value of a repeatable option, in order.
    package func values<Value>(of option: Option<Value>) throws(UsageError) -> [Value] {
        var parsed: [Value] = []
        for text in values[option.spec.name] ?? [] {
            parsed.append(try option.parse(text))
        }
        return parsed
    }
}

/// What the parser found: arguments to run with, or a request for help or the version.
package enum ParseOutcome: Sendable, Hashable {
    case arguments(ParsedArguments)
    case help
    case version
}

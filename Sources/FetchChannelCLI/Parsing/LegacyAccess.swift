import FetchChannel

// Transitional: the name-based reads of the commands not yet converted to `CLICommand`.
// Removed once every command reads its options through its declarations.

extension OptionSpec: OptionDeclaration {
    package var spec: OptionSpec { self }
}

extension ParsedArguments {
    func flag(_ name: String) -> Bool { flags.contains(name) }
    func value(_ name: String) -> String? { values[name]?.last }
    func allValues(_ name: String) -> [String] { values[name] ?? [] }

    private func read<Value: Sendable>(_ name: String, _ parser: ValueParser<Value>) throws(UsageError) -> Value? {
        guard let text = value(name) else { return nil }
        return try parser.read(text, name)
    }

    func integer(_ name: String, in range: ClosedRange<Int64>) throws(UsageError) -> Int64? {
        try read(name, .integer(in: range))
    }

    func decimal(_ name: String, in range: ClosedRange<Double>) throws(UsageError) -> Double? {
        try read(name, .decimal(in: range))
    }

    func choice(_ name: String, from choices: [String]) throws(UsageError) -> String? {
        try read(name, .choice(choices))
    }

    func choice<Value: Sendable>(_ name: String, from choices: KeyValuePairs<String, Value>) throws(UsageError)
        -> Value?
    {
        try read(name, .choice(choices))
    }

    func nonEmpty(_ name: String) throws(UsageError) -> String? {
        try read(name, .nonEmpty)
    }
}

extension UsageError {
    init(_ message: String) { self.init(.invalidValue, message) }
}

extension CLIFailure {
    init(_ message: String) { self.init(.internalError, message) }
}

extension BackendTrustOptions {
    static func parse(_ invocation: Invocation, server: BackendURL) throws -> (
        trust: TLSTrust, caFile: String?, pins: [String]
    ) {
        try parse(invocation.arguments, context: invocation.context, server: server)
    }
}

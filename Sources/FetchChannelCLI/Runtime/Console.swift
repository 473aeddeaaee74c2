/// Where a command writes: data on standard output (JSON when `--json` was given), progress and
/// diagnostics on standard error.
struct Console: Sendable {
    let standardOutput: OutputChannel
    let standardError: OutputChannel
    /// Whether `--json` was given: the command prints one JSON value on standard output.
    let json: Bool

    init(_ arguments: ParsedArguments, context: CLIContext) {
        self.standardOutput = context.standardOutput
        self.standardError = context.standardError
        self.json = arguments[CommonOptions.json]
    }

    private init(standardOutput: OutputChannel, standardError: OutputChannel, json: Bool) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.json = json
    }

    /// The same console with its data going to `channel` (a command's `--output` file).
    func writingData(to channel: OutputChannel) -> Console {
        Console(standardOutput: channel, standardError: standardError, json: json)
    }

    /// Writes a diagnostic line to standard error, without control characters (``PrintableText``):
    /// diagnostics carry backend text (error excerpts) and stored values.
    func note(_ text: String) {
        standardError.line(PrintableText.of(text))
    }

    /// Writes a line of data to standard output.
    func line(_ text: String) {
        standardOutput.line(text)
    }

    /// Writes `object` as one line of JSON to standard output.
    func printJSON(_ object: Any) throws {
        standardOutput.line(try JSONOutput.text(object))
    }
}

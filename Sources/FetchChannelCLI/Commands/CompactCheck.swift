import DeviceSigning
import Foundation

/// How `verify` and `decrypt` check a compact serialization (a JWS or a JWE): the argument as
/// given, or read from standard input when it is `-`. A refusal is reported with `--json` as the
/// object `{<verdict>: false, "code", "reason"}` on standard output, and as
/// `Error: <headline>: <reason>` on standard error (exit 1).
struct CompactCheck {
    let console: Console
    let context: CLIContext
    /// The key file option's value (`--public-key` or `--private-key`).
    let keyFile: URL
    /// The positional argument: the compact serialization, or `-`.
    let argument: String
    /// "JWS" or "JWE", as the messages name it.
    let name: String
    let maximumLength: Int
    /// The member that says whether it passed: `valid` or `decrypted`.
    let verdict: String
    let headline: String

    /// The parse step's part: the key file option, the one positional argument and `--json`.
    init(
        _ arguments: ParsedArguments, keyFile: Option<String>, context: CLIContext, name: String, maximumLength: Int,
        verdict: String, headline: String
    ) throws(UsageError) {
        self.console = Console(arguments, context: context)
        self.context = context
        self.keyFile = context.fileURL(try arguments.required(keyFile))
        self.argument = arguments.positionals[0]
        self.name = name
        self.maximumLength = maximumLength
        self.verdict = verdict
        self.headline = headline
    }

    /// The result of `check` on the compact serialization, or nil once its refusal (input too
    /// large, or a `DeviceSigningError` of `check`) is reported. Other errors propagate.
    func run<Value>(_ check: (String) throws -> Value) throws -> Value? {
        guard let compact = read() else {
            report(
                code: DeviceSigningError.Code.inputTooLarge.rawValue,
                reason: "the \(name) on standard input is longer than \(maximumLength) bytes")
            return nil
        }
        do {
            return try check(compact)
        } catch let error as DeviceSigningError {
            report(code: error.code.rawValue, reason: error.reason)
            return nil
        }
    }

    /// Reports what passed and returns exit status 0: with `--json` the object
    /// `{<verdict>: true, "header", <member>: <content as JSON, else as text>}`, else `bytes` on
    /// standard output.
    func reportPassed(header: [String: Any], _ member: String, _ content: Data, bytes: [UInt8]) throws -> Int32 {
        if console.json {
            let value: Any = JSONOutput.parse(content) ?? String(decoding: content, as: UTF8.self)
            try console.printJSON([verdict: true, "header": header, member: value])
        } else {
            console.standardOutput.write(bytes: bytes)
        }
        return ExitCode.success
    }

    /// The compact serialization, or nil when standard input held more than `maximumLength`
    /// bytes (plus a line ending).
    private func read() -> String? {
        guard argument == "-" else { return argument }
        let input = context.readStandardInput(maximumLength + 2)
        guard input.count <= maximumLength + 2 else { return nil }
        return String(decoding: input, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func report(code: String, reason: String) {
        if console.json, let text = try? JSONOutput.text([verdict: false, "code": code, "reason": reason]) {
            console.line(text)
        }
        console.note("Error: \(headline): \(reason)")
    }
}

import DeviceSigning
import Foundation

/// How `verify` and `decrypt` check a compact serialization (a JWS or a JWE): the argument as
/// given, or read from standard input when it is `-`. A refusal is reported with `--json` as the
/// object `{<verdict>: false, "code", "reason"}` on standard output, and as
/// `Error: <headline>: <reason>` on standard error (exit 1).
struct CompactCheck {
    /// What a command checks, and how its messages and `--json` name it.
    enum Serialization: String, Sendable {
        case jws = "JWS"
        case jwe = "JWE"

        var maximumLength: Int { self == .jws ? CompactJWS.maximumLength : CompactJWE.maximumLength }
        /// The member that says whether it passed.
        var verdict: String { self == .jws ? "valid" : "decrypted" }
        /// What a refusal says first.
        var headline: String { self == .jws ? "the JWS is not valid" : "the JWE does not decrypt" }
        /// The member of what passed.
        var content: String { self == .jws ? "payload" : "plaintext" }
        /// The command's one positional argument.
        var argument: PositionalSpec {
            PositionalSpec(rawValue, help: "The compact \(rawValue), or - to read it from standard input.")
        }
    }

    /// What passed the check: its protected header as `--json` prints it, and its content,
    /// printed as it is without `--json`, a line feed after it when `endsLine` and it has none.
    /// To a pipe or a file, a JWE's plaintext is written from the storage that is zeroed when it
    /// is released; shown on a terminal, or as JSON, it is made into text first, which is not.
    struct Passed {
        let header: [String: Any]
        let content: Data
        let endsLine: Bool

        /// `header` without its nil members (the optional `kid`, `typ`).
        init(header: [String: Any?], content: Data, endsLine: Bool = false) {
            self.header = header.compactMapValues { $0 }
            self.content = content
            self.endsLine = endsLine
        }

        /// Whether a line feed is printed after the content.
        var addsLineFeed: Bool { endsLine && content.last != UInt8(ascii: "\n") }
    }

    let console: Console
    let context: CLIContext
    let serialization: Serialization
    /// The key file option's value (`--public-key` or `--private-key`).
    let keyFile: URL
    /// The positional argument: the compact serialization, or `-`.
    let argument: String

    /// The parse step's part: the key file option, the one positional argument and `--json`.
    init(
        _ serialization: Serialization, _ arguments: ParsedArguments, keyFile: Option<String>, context: CLIContext
    ) throws(UsageError) {
        self.console = Console(arguments, context: context)
        self.context = context
        self.serialization = serialization
        self.keyFile = try context.fileURL(try arguments.required(keyFile))
        self.argument = arguments.positionals[0]
    }

    /// The result of `check` on the compact serialization, or nil once its refusal (standard
    /// input unreadable or too large, or a `DeviceSigningError` of `check`) is reported. Other
    /// errors propagate.
    func run<Value>(_ check: (String) throws -> Value) throws -> Value? {
        let input: String?
        do {
            input = try read()
        } catch let failure as CLIFailure {
            refuse(failure)
            return nil
        }
        guard let compact = input else {
            report(
                code: DeviceSigningError.Code.inputTooLarge.rawValue,
                reason:
                    "the \(serialization.rawValue) on standard input is longer than \(serialization.maximumLength) bytes"
            )
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
    /// `{<verdict>: true, "header", <content member>: <content as JSON, else as text>}` (content
    /// that is not UTF-8 text as `<content member>Base64url` instead), else its bytes on standard
    /// output.
    func report(_ passed: Passed) throws -> Int32 {
        if console.json {
            guard let text = String(validating: passed.content, as: UTF8.self) else {
                // As text it would lose every byte that is not UTF-8, silently.
                try console.printJSON([
                    serialization.verdict: true, "header": passed.header,
                    serialization.content + "Base64url": Self.base64url(passed.content),
                ])
                return ExitCode.success
            }
            // Embedded as JSON only when it has one reading: with a duplicate member name (which a
            // strict reader refuses) JSONSerialization would keep one of the values and drop the
            // other, so such content is shown as the text it is.
            let unambiguous = (try? StrictJSON.requireUniqueMemberNames(passed.content)) != nil
            let value: Any = (unambiguous ? JSONOutput.parse(passed.content) : nil) ?? text
            try console.printJSON([serialization.verdict: true, "header": passed.header, serialization.content: value])
        } else if console.standardOutput.isTerminal {
            // The content is the sender's to choose (anyone with the public key can encrypt to it):
            // on a terminal its control characters are shown as `?`, never run as escape sequences
            // (a retitle, a cleared screen). A pipe or a file gets the bytes as they are.
            let text = String(decoding: passed.content, as: UTF8.self) + (passed.addsLineFeed ? "\n" : "")
            console.standardOutput.write(PrintableText.of(text))
        } else {
            passed.content.withUnsafeBytes { console.standardOutput.write(buffer: $0) }
            if passed.addsLineFeed { console.standardOutput.write("\n") }
        }
        return ExitCode.success
    }

    /// Unpadded base64url (RFC 4648 §5) of `bytes`.
    private static func base64url(_ bytes: Data) -> String {
        bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Reports an input that cannot be used (a key file unreadable, of another curve or the
    /// wrong half of a pair; standard input unreadable): `--json` still prints
    /// `{<verdict>: false, "code", "reason"}`, so that a program reading standard output gets
    /// its answer; standard error says `Error: <message>`.
    func refuse(_ failure: CLIFailure) {
        if console.json,
            let text = try? JSONOutput.text(
                [serialization.verdict: false, "code": failure.code.rawValue, "reason": failure.message])
        {
            console.line(text)
        }
        console.note("Error: \(failure.message)")
    }

    /// The compact serialization, or nil when standard input held more than `maximumLength`
    /// bytes (plus a line ending); throws when standard input cannot be read.
    private func read() throws -> String? {
        guard argument == "-" else { return argument }
        let maximumLength = serialization.maximumLength
        let input = try context.readStandardInput(maximumLength + 2)
        guard input.count <= maximumLength + 2 else { return nil }
        return String(decoding: input, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func report(code: String, reason: String) {
        if console.json,
            let text = try? JSONOutput.text([serialization.verdict: false, "code": code, "reason": reason])
        {
            console.line(text)
        }
        console.note("Error: \(serialization.headline): \(reason)")
    }
}

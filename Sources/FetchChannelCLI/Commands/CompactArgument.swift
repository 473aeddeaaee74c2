import Foundation

/// The compact JWS or JWE that `verify` and `decrypt` check: as given, or read from standard input
/// when the argument is `-` (surrounding whitespace dropped).
enum CompactArgument {
    /// The compact serialization, or nil when standard input held more than `maximumLength`
    /// bytes (plus a line ending).
    static func read(_ argument: String, maximumLength: Int, context: CLIContext) -> String? {
        guard argument == "-" else { return argument }
        let input = context.readStandardInput(maximumLength + 2)
        guard input.count <= maximumLength + 2 else { return nil }
        return String(decoding: input, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A compact serialization that does not verify or decrypt: with `--json` the object
/// `{<verdict>: false, "code", "reason"}` on standard output, and `Error: <headline>: <reason>` on
/// standard error; exit 1.
struct CompactRefusal {
    let console: Console
    /// The member that says whether it passed: `valid` or `decrypted`.
    let verdict: String
    let headline: String

    func report(code: String, reason: String) -> Int32 {
        if console.json, let text = try? JSONOutput.text([verdict: false, "code": code, "reason": reason]) {
            console.line(text)
        }
        console.note("Error: \(headline): \(reason)")
        return ExitCode.failure
    }
}

import Foundation

/// JSON for `--json`: one document, keys sorted, slashes unescaped, `null` for absent values.
enum JSONOutput {
    /// Serializes a tree of `[String: Any]`, `[Any]`, String, numbers, Bool and `NSNull`.
    static func text(_ object: Any) throws -> String {
        guard JSONSerialization.isValidJSONObject(object) else {
            throw CLIFailure(.internalError, "internal error: the output is not JSON-serializable")
        }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return escapingTerminalControls(String(decoding: data, as: UTF8.self))
    }

    /// `json` with C1 control characters, the line and paragraph separators and bidirectional
    /// controls written as `\u` escapes: the same JSON (outside strings a document is ASCII), but
    /// nothing a terminal acts on when the document is shown there. JSONSerialization escapes the
    /// C0 controls only, and a backend's text reaches `--json` output.
    static func escapingTerminalControls(_ json: String) -> String {
        func escaped(_ scalar: Unicode.Scalar) -> Bool {
            (0x80...0x9F).contains(scalar.value) || PrintableText.isLayoutControl(scalar)
        }
        guard json.unicodeScalars.contains(where: escaped) else { return json }
        var result = String.UnicodeScalarView()
        for scalar in json.unicodeScalars {
            guard escaped(scalar) else {
                result.append(scalar)
                continue
            }
            let digits = String(scalar.value, radix: 16)
            result.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - digits.count) + digits).unicodeScalars)
        }
        return String(result)
    }

    /// A value or JSON null.
    static func orNull(_ value: Any?) -> Any {
        value ?? NSNull()
    }

    /// JSON text parsed into a tree (for embedding a payload); nil when it is not JSON.
    static func parse(_ data: Data) -> Any? {
        try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    }

    /// An `Encodable` value as a tree to embed (keys sorted, slashes unescaped); null when it does
    /// not encode to JSON.
    static func tree(_ value: some Encodable) throws -> Any {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return parse(try encoder.encode(value)) ?? NSNull()
    }
}

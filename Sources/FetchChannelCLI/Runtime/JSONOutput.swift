import Foundation

/// JSON for `--json`: one document, keys sorted, slashes unescaped, `null` for absent values.
enum JSONOutput {
    /// Serializes a tree of `[String: Any]`, `[Any]`, String, numbers, Bool and `NSNull`.
    static func text(_ object: Any) throws -> String {
        guard JSONSerialization.isValidJSONObject(object) else {
            throw CLIFailure(.internalError, "internal error: the output is not JSON-serializable")
        }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
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

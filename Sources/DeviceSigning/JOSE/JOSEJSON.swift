import Foundation

/// How the JOSE types read a JSON object (a JWS or JWE protected header, a JWK): by the package's
/// one strict reader (`StrictJSON.parse`: RFC 8259 text only, no member name twice in any object,
/// so that `{"alg":"none","alg":"ES256"}` is read neither way, RFC 7515 §5.2), in one pass.
enum JOSEJSON {
    /// The members of the object `json`, or `code` with a reason that starts with `subject`
    /// ("The JWS header", "The JWK"). Members are handed on as the plain Swift values the JOSE
    /// types test for (`String`, `Bool`, `Int64`, `Double`, `[Any]`, `[String: Any]`, `NSNull`).
    static func members<Bytes: ContiguousBytes>(
        of json: Bytes, subject: String, code: DeviceSigningError.Code
    ) throws -> [String: Any] {
        try object(of: json, subject: subject, code: code).mapValues(plain)
    }

    /// The same members as read, for a type that matches on them itself.
    static func object<Bytes: ContiguousBytes>(
        of json: Bytes, subject: String, code: DeviceSigningError.Code
    ) throws -> [String: JSONValue] {
        var builder = JSONValueBuilder()
        try read(json, into: &builder, subject: subject, code: code)
        guard case .object(let members) = builder.value else { throw notAnObject(subject, code: code) }
        return members
    }

    /// Reads `json` into `sink` (a reader of one header's shape, e.g. `JWEHeaderReader`) with the
    /// same strictness and the same errors as ``object(of:subject:code:)``, which builds the tree.
    static func read<Bytes: ContiguousBytes, Sink: StrictJSONSink>(
        _ json: Bytes, into sink: inout Sink, subject: String, code: DeviceSigningError.Code
    ) throws {
        // Read in place: the sink is neither copied in nor out (JWEHeaderReader is not small).
        let outcome = json.withUnsafeBytes { bytes -> StrictJSON.Violation? in
            do throws(StrictJSON.Violation) {
                try StrictJSON.read(bytes: bytes, into: &sink)
                return nil
            } catch {
                return error
            }
        }
        guard let outcome else { return }
        switch outcome {
        case .notJSON:
            throw notAnObject(subject, code: code)
        case .duplicateMemberName:
            throw DeviceSigningError(code, "\(subject) is ambiguous: \(outcome).")
        default:
            throw DeviceSigningError(code, "\(subject) is not acceptable JSON: \(outcome).")
        }
    }

    /// The error for text that is not JSON, or JSON but not one object.
    static func notAnObject(_ subject: String, code: DeviceSigningError.Code) -> DeviceSigningError {
        DeviceSigningError(code, "\(subject) is not a JSON object.")
    }

    /// A value as the plain Swift value `members` hands on (also what error texts show of it).
    static func plain(_ value: JSONValue) -> Any {
        switch value {
        case .null: NSNull()
        case .bool(let flag): flag
        case .integer(let number): number
        case .number(let number): number
        case .string(let text): text
        case .array(let elements): elements.map(plain)
        case .object(let members): members.mapValues(plain)
        }
    }
}

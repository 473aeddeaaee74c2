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

    /// The same members as read, for a type that matches on them itself: the JWE header, read for
    /// every encrypted answer, saves boxing each value into `Any` and casting it back.
    static func object<Bytes: ContiguousBytes>(
        of json: Bytes, subject: String, code: DeviceSigningError.Code
    ) throws -> [String: JSONValue] {
        let value: JSONValue
        do throws(StrictJSON.Violation) {
            value = try StrictJSON.parse(json)
        } catch .notJSON {
            throw DeviceSigningError(code, "\(subject) is not a JSON object.")
        } catch .duplicateMemberName(let name) {
            let violation = StrictJSON.Violation.duplicateMemberName(name)
            throw DeviceSigningError(code, "\(subject) is ambiguous: \(violation).")
        } catch {
            throw DeviceSigningError(code, "\(subject) is not acceptable JSON: \(error).")
        }
        guard case .object(let members) = value else {
            throw DeviceSigningError(code, "\(subject) is not a JSON object.")
        }
        return members
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

import Foundation

/// How the JOSE types read a JSON object (a JWS or JWE protected header, a JWK): strictly first
/// (`StrictJSON`: RFC 8259 text only, no member name twice in any object, so that
/// `{"alg":"none","alg":"ES256"}` is read neither way, RFC 7515 §5.2), then into its members.
enum JOSEJSON {
    /// The members of the object `json`, or `code` with a reason that starts with `subject`
    /// ("The JWS header", "The JWK").
    static func members(of json: Data, subject: String, code: DeviceSigningError.Code) throws -> [String: Any] {
        do throws(StrictJSON.Violation) {
            try StrictJSON.requireUniqueMemberNames(json)
        } catch .notJSON {
            throw DeviceSigningError(code, "\(subject) is not a JSON object.")
        } catch {
            throw DeviceSigningError(code, "\(subject) is ambiguous: \(error).")
        }
        guard let object = try? JSONSerialization.jsonObject(with: json), let members = object as? [String: Any] else {
            throw DeviceSigningError(code, "\(subject) is not a JSON object.")
        }
        return members
    }
}

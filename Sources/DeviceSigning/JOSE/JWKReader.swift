/// Reads a JWK's JSON text (a `StrictJSONSink` of `StrictJSON.read`) so that its private member
/// `d` never becomes a `String`: Swift strings cannot be zeroed, and a private JWK is a secret.
///
/// The top-level `d`, when it is a string, is taken as bytes from the text and decoded straight
/// into `SecureBytes`, or, for a reading that needs only the public members, left where it is.
/// Everything else is read as ``JOSEJSON/object(of:subject:code:)`` reads it (the tree, every
/// duplicate name refused), with `d`'s place in it held by an empty string.
struct JWKReader: StrictJSONSink {
    static var readsValues: Bool { true }
    static var readsSecretStrings: Bool { true }

    /// What the top-level `d` was.
    enum PrivateMember {
        case absent
        /// Present, but not a string.
        case notString
        /// A string, not decoded (a reading of the public members only).
        case skipped
        /// A string that is not strict base64url (or that uses JSON escapes, which base64url never needs).
        case notBase64URL
        /// A strict base64url string, decoded.
        case decoded(SecureBytes)
    }

    /// Whether a string `d` is decoded (a private key's reading) or skipped.
    private let decodesPrivateMember: Bool
    private(set) var privateMember = PrivateMember.absent
    private var tree = JSONValueBuilder()
    /// Open containers: 1 inside the top-level object.
    private var depth = 0
    private(set) var nextStringIsSecret = false

    init(decodingPrivateMember: Bool) {
        decodesPrivateMember = decodingPrivateMember
    }

    /// The top-level object's members, once the text was read; nil when the text was no object.
    var members: [String: JSONValue]? {
        guard case .object(let members) = tree.value else { return nil }
        return members
    }

    mutating func beginObject() {
        nextStringIsSecret = false
        depth += 1
        tree.beginObject()
    }

    mutating func beginArray() {
        nextStringIsSecret = false
        depth += 1
        tree.beginArray()
    }

    mutating func memberName(_ name: String) {
        tree.memberName(name)
        if depth == 1, name == "d" {
            nextStringIsSecret = true
            privateMember = .notString  // until a string arrives
        }
    }

    mutating func scalar(_ value: JSONValue) throws(StrictJSON.Violation) {
        nextStringIsSecret = false
        try tree.scalar(value)
    }

    mutating func secretString(raw: UnsafeRawBufferPointer, isEscaped: Bool) throws(StrictJSON.Violation) {
        nextStringIsSecret = false
        if !decodesPrivateMember {
            privateMember = .skipped
        } else if isEscaped {
            privateMember = .notBase64URL
        } else if let count = Base64.decodedCount(of: raw, alphabet: .url) {
            var valid = false
            let scalar = SecureBytes(count: count) { valid = Base64.decodeSecret(raw, alphabet: .url, into: $0) }
            privateMember = valid ? .decoded(scalar) : .notBase64URL
        } else {
            privateMember = .notBase64URL
        }
        try tree.scalar(.string(""))  // d's place, for the duplicate check and the member list
    }

    mutating func endObject() throws(StrictJSON.Violation) {
        depth -= 1
        try tree.endObject()
    }

    mutating func endArray() throws(StrictJSON.Violation) {
        depth -= 1
        try tree.endArray()
    }
}

import Foundation

/// A public EC P-256 JSON Web Key (RFC 7517, RFC 7518 §6.2.1).
///
/// Only the public members are modelled: a private `d` is exported and imported through
/// `P256.Signing.PrivateKey.jwkRepresentation(includingPrivateKey:)` and `init(jwkRepresentation:)`,
/// as `SecureBytes`, and only on explicit request.
public struct JWK: Sendable, Hashable, Codable {
    public let kty: String
    public let crv: String
    /// base64url of the 32-byte x coordinate.
    public let x: String
    /// base64url of the 32-byte y coordinate.
    public let y: String
    /// The intended use (RFC 7517 §4.2): `"sig"` or `"enc"`; nil when not stated. Not part of the
    /// thumbprint (RFC 7638 takes the required members only), so it never changes a key id.
    public let use: String?

    public init(kty: String = "EC", crv: String = "P-256", x: String, y: String, use: String? = nil) {
        self.kty = kty
        self.crv = crv
        self.x = x
        self.y = y
        self.use = use
    }

    /// This JWK with `use` set (e.g. `"enc"` for a registration's encryption key).
    public func withUse(_ use: String?) -> JWK {
        JWK(kty: kty, crv: crv, x: x, y: y, use: use)
    }

    /// The RFC 7638 canonical JSON: required members only, sorted, no whitespace. Each value is
    /// written as a JSON string, so a JWK built from unchecked members (the memberwise init,
    /// `Decodable`) cannot put members of its own into the text its thumbprint is taken over.
    public var thumbprintInput: String {
        #"{"crv":\#(Self.quoted(crv)),"kty":\#(Self.quoted(kty)),"x":\#(Self.quoted(x)),"y":\#(Self.quoted(y))}"#
    }

    /// RFC 7638 thumbprint: base64url(SHA-256(canonical JSON)). This package's key id.
    public var thumbprint: String {
        let digest = Array(thumbprintInput.utf8).withUnsafeBytes { P256Backend.sha256($0) }
        return Base64.encode(digest, alphabet: .url)
    }

    /// The compact JSON with members sorted: the thumbprint input, plus `use` when stated.
    public var jsonString: String {
        guard let use else { return thumbprintInput }
        return
            #"{"crv":\#(Self.quoted(crv)),"kty":\#(Self.quoted(kty)),"use":\#(Self.quoted(use)),"x":\#(Self.quoted(x)),"y":\#(Self.quoted(y))}"#
    }

    /// `text` as a JSON string. The members of a checked JWK are plain ASCII (base64url, `EC`,
    /// `P-256`), which this leaves as they are.
    private static func quoted(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            return "\"\(text)\""
        }
        // A one-element array is always serializable; its brackets dropped, the string is quoted.
        let array = (try? JSONSerialization.data(withJSONObject: [text])) ?? Data(#"[""]"#.utf8)
        return String(String(decoding: array, as: UTF8.self).dropFirst().dropLast())
    }

    /// Parses and checks a public JWK (kty EC, crv P-256, 32-byte coordinates on the curve). A
    /// private JWK's `d` is passed over without being read (``JWKReader``).
    public init<Bytes: DataProtocol>(jsonRepresentation: Bytes) throws {
        try self.init(members: try JWK.read(jsonRepresentation, decodingPrivateMember: false).members)
    }

    /// The public JWK of the members read from a JWK's text.
    fileprivate init(members: [String: JSONValue]) throws {
        guard case .string(let kty)? = members["kty"], case .string(let crv)? = members["crv"],
            case .string(let x)? = members["x"], case .string(let y)? = members["y"]
        else {
            throw DeviceSigningError(.malformedEncoding, "A P-256 JWK needs string members kty, crv, x and y.")
        }
        var use: String?
        switch members["use"] {
        case nil: use = nil
        case .string(let text)?: use = text
        default: throw DeviceSigningError(.malformedEncoding, "A JWK's use member must be a string.")
        }
        self.init(kty: kty, crv: crv, x: x, y: y, use: use)
        _ = try publicKey()
    }

    /// The public key this JWK describes, with every check of `PublicKey(x963Representation:)`.
    public func publicKey() throws -> P256.Signing.PublicKey {
        try P256.Signing.PublicKey(x963Representation: x963Point())
    }

    /// 0x04 || x || y once kty, crv and the coordinates' encoding and lengths are checked; whether
    /// the point is on the curve is for the key constructors (or `PeerPublicKey`).
    func x963Point() throws -> [UInt8] {
        guard kty == "EC" else {
            throw DeviceSigningError(.unsupportedKeyType, "JWK kty is \"\(kty)\"; only \"EC\" is supported.")
        }
        guard crv == "P-256" else {
            throw DeviceSigningError(.unsupportedCurve, "JWK crv is \"\(crv)\"; only \"P-256\" is supported.")
        }
        return try Self.x963Point(x: x, y: y)
    }

    /// 0x04 || x || y from the base64url coordinates, each decoded straight into its place.
    static func x963Point(x: String, y: String) throws -> [UInt8] {
        var (x, y) = (x, y)
        var point = [UInt8](repeating: 0x04, count: P256Backend.pointBytes)
        let decoded = point.withUnsafeMutableBytes { point in
            x.withUTF8 { x in
                y.withUTF8 { y in
                    Base64.decode(UnsafeRawBufferPointer(x), alphabet: .url, into: .init(rebasing: point[1..<33]))
                        && Base64.decode(UnsafeRawBufferPointer(y), alphabet: .url, into: .init(rebasing: point[33...]))
                }
            }
        }
        guard decoded else {
            throw DeviceSigningError(
                .malformedEncoding, "JWK x and y must be base64url (no padding) of exactly 32 bytes each.")
        }
        return point
    }

    static let maximumJSONBytes = 8 * 1024

    /// Reads a JWK's text: its members, `d`'s place holding an empty string, and its `d`,
    /// decoded into `SecureBytes` when `decodingPrivateMember` (``JWKReader``).
    static func read<Bytes: DataProtocol>(_ json: Bytes, decodingPrivateMember: Bool) throws -> (
        members: [String: JSONValue], privateMember: JWKReader.PrivateMember
    ) {
        guard json.count <= maximumJSONBytes else {
            throw DeviceSigningError(.inputTooLarge, "A JWK is at most \(maximumJSONBytes) bytes.")
        }
        // The text may be a private JWK: the copy made here is zeroed in place when done.
        var data = Data(json)
        defer { data.withUnsafeMutableBytes { secureZero($0) } }
        var reader = JWKReader(decodingPrivateMember: decodingPrivateMember)
        try JOSEJSON.read(data, into: &reader, subject: "The JWK", code: .malformedEncoding)
        guard let members = reader.members else {
            throw JOSEJSON.notAnObject("The JWK", code: .malformedEncoding)
        }
        return (members, reader.privateMember)
    }

    /// Whether `json` is a JWK's JSON object without a top-level `d`: a public key. False for
    /// a private JWK and for text that is not one JSON object. The `d` of a private JWK is not read.
    public static func isPublicOnly<Bytes: DataProtocol>(_ json: Bytes) -> Bool {
        guard let read = try? read(json, decodingPrivateMember: false), case .absent = read.privateMember else {
            return false
        }
        return true
    }
}

extension P256.Signing.PublicKey {
    /// This key as a public JWK.
    public var jwk: JWK {
        let raw = Array(rawRepresentation)
        return JWK(x: Base64.encode(raw[0..<32], alphabet: .url), y: Base64.encode(raw[32..<64], alphabet: .url))
    }

    /// The RFC 7638 JWK thumbprint: the key id used by the key store.
    public var jwkThumbprint: String { jwk.thumbprint }

    public init(jwk: JWK) throws {
        self = try jwk.publicKey()
    }
}

extension P256.Signing.PrivateKey {
    /// The JWK JSON of this key. With `includingPrivateKey: true` it contains `d` and is secret.
    /// The private JSON is written straight into the returned `SecureBytes`: the base64url of `d`
    /// exists nowhere else.
    public func jwkRepresentation(includingPrivateKey: Bool) throws -> SecureBytes {
        let jwk = publicKey.jwk
        guard includingPrivateKey else { return SecureBytes(jwk.jsonString.utf8) }
        let scalar = try rawRepresentation
        let before = Array(#"{"crv":"P-256","d":""#.utf8)
        let after = Array(#"","kty":"EC","x":"\#(jwk.x)","y":"\#(jwk.y)"}"#.utf8)
        let dCount = Base64.encodedCount(scalar.count, alphabet: .url)
        return SecureBytes(count: before.count + dCount + after.count) { output in
            output.copyBytes(from: before)
            let dOutput = UnsafeMutableRawBufferPointer(rebasing: output[before.count...])
            _ = scalar.withUnsafeBytes { Base64.encode($0, alphabet: .url, into: dOutput) }
            UnsafeMutableRawBufferPointer(rebasing: output[(before.count + dCount)...]).copyBytes(from: after)
        }
    }

    /// A key from a private JWK (kty EC, crv P-256, d, and x/y that must match d). `d` is decoded
    /// from the text straight into `SecureBytes` and is never a `String` (``JWKReader``); this
    /// package's copy of the text is zeroed.
    public init<Bytes: DataProtocol>(jwkRepresentation: Bytes) throws {
        let (members, privateMember) = try JWK.read(jwkRepresentation, decodingPrivateMember: true)
        switch privateMember {
        case .absent, .notString: throw DeviceSigningError(.invalidKey, "The JWK has no private member d.")
        case .skipped, .notBase64URL, .decoded: break
        }
        let publicJWK = try JWK(members: members)
        guard case .decoded(let scalar) = privateMember else {
            throw DeviceSigningError(.malformedEncoding, "JWK d must be base64url without padding.")
        }
        guard scalar.count == 32 else {
            throw DeviceSigningError(.invalidKey, "JWK d must decode to exactly 32 bytes.")
        }
        let key = try P256.Signing.PrivateKey(
            backing: scalar.withUnsafeBytes { try P256Backend.privateKey(scalar: $0) })
        guard key.publicKey == (try publicJWK.publicKey()) else {
            throw DeviceSigningError(.invalidKey, "JWK x/y do not belong to d.")
        }
        self = key
    }
}

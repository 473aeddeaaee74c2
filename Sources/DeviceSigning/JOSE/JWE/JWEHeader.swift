import Foundation

/// The protected header of a JWE with ECDH-ES, as parsed by `CompactJWE`.
///
/// Parsing is as strict as `JWSHeader`'s: at most 4 KiB; one JSON object without duplicate
/// member names at any depth; `alg` and `enc` from the allow-lists of `JWE.Algorithm` and
/// `JWE.ContentEncryption`; `crit` and `zip` refused; `kid`, `typ` and `cty` strings when present;
/// `apu` and `apv` strict base64url of at most `ConcatKDF.maximumPartyInfoBytes`; `epk` a public
/// EC P-256 JWK whose point is on the curve, checked here, before any key agreement can use it
/// (invalid-curve attacks). Other members are ignored (RFC 7516 §4).
public struct JWEHeader: Sendable, Hashable {
    public let alg: JWE.Algorithm
    public let enc: JWE.ContentEncryption
    /// The sender's ephemeral public key, decoded and checked on the curve when parsed; the
    /// decrypting derive uses it as it is (docs/ARCHITECTURE.md, "Encrypted answers").
    let epkKey: PeerPublicKey
    public let kid: String?
    public let typ: String?
    public let cty: String?
    /// The decoded `apu` (Agreement PartyUInfo); empty when absent.
    public let apu: [UInt8]
    /// The decoded `apv` (Agreement PartyVInfo); empty when absent.
    public let apv: [UInt8]

    static let maximumBytes = 4 * 1024

    init(json: [UInt8]) throws {
        guard json.count <= JWEHeader.maximumBytes else {
            throw DeviceSigningError(.inputTooLarge, "The JWE header is larger than \(JWEHeader.maximumBytes) bytes.")
        }
        let subject = "The JWE header"
        var reader = JWEHeaderReader()
        try JOSEJSON.read(json, into: &reader, subject: subject, code: .malformedJWE)
        guard reader.isObject else { throw JOSEJSON.notAnObject(subject, code: .malformedJWE) }
        let members = reader.members
        self.alg = try Self.allowed(members.alg, name: "alg", as: JWE.Algorithm.self)
        self.enc = try Self.allowed(members.enc, name: "enc", as: JWE.ContentEncryption.self)
        guard members.crit == nil else {
            throw DeviceSigningError(.malformedJWE, "The JWE header has crit extensions, which are not supported.")
        }
        guard members.zip == nil else {
            throw DeviceSigningError(.unsupportedAlgorithm, "The JWE is compressed (zip), which is not supported.")
        }
        self.kid = try Self.optionalString(members.kid, name: "kid")
        self.typ = try Self.optionalString(members.typ, name: "typ")
        self.cty = try Self.optionalString(members.cty, name: "cty")
        self.apu = try Self.partyInfo(members.apu, name: "apu")
        self.apv = try Self.partyInfo(members.apv, name: "apv")
        self.epkKey = try PeerPublicKey(point: Self.ephemeralPoint(members.epk, members.epkMembers))
    }

    /// The sender's ephemeral public key as its uncompressed point (0x04 || x || y).
    var epkPoint: [UInt8] { epkKey.point }

    /// The sender's ephemeral public key (built from the checked point; throws only when OpenSSL
    /// cannot allocate it).
    public var epk: P256.KeyAgreement.PublicKey {
        get throws { try P256.KeyAgreement.PublicKey(x963Representation: epkPoint) }
    }

    static func allowed<Value: RawRepresentable & CaseIterable>(
        _ member: JSONValue?, name: String, as: Value.Type
    ) throws -> Value where Value.RawValue == String {
        // Only an error needs the list.
        var accepted: String { Value.allCases.map(\.rawValue).joined(separator: ", ") }
        guard let member else {
            throw DeviceSigningError(.unsupportedAlgorithm, "The JWE header has no \(name); accepted: \(accepted).")
        }
        // Code point by code point, never normalized (RFC 7515 §5.3): `init(rawValue:)` compares
        // with String's ==, which would take "ECDH-ES+A128\u{212A}W" (a KELVIN SIGN) for ...KW.
        guard case .string(let text) = member,
            let value = Value.allCases.first(where: { $0.rawValue.unicodeScalars.elementsEqual(text.unicodeScalars) })
        else {
            let shown = printable(String(describing: JOSEJSON.plain(member)))
            throw DeviceSigningError(.unsupportedAlgorithm, "The JWE \(name) is \(shown); accepted: \(accepted).")
        }
        return value
    }

    static func optionalString(_ member: JSONValue?, name: String) throws -> String? {
        guard let member else { return nil }
        guard case .string(let text) = member else {
            throw DeviceSigningError(.malformedJWE, "The JWE \(name) must be a string.")
        }
        return text
    }

    static func partyInfo(_ member: JSONValue?, name: String) throws -> [UInt8] {
        guard let member else { return [] }
        let limit = ConcatKDF.maximumPartyInfoBytes
        guard case .string(let text) = member, text.utf8.count <= CompactJWE.encodedLength(of: limit) else {
            throw DeviceSigningError(.malformedJWE, "The JWE \(name) must be base64url of at most \(limit) bytes.")
        }
        guard let bytes = Base64.decode(text, alphabet: .url), bytes.count <= limit else {
            throw DeviceSigningError(.malformedJWE, "The JWE \(name) is not base64url without padding.")
        }
        return bytes
    }

    private static func ephemeralPoint(
        _ member: JWEHeaderReader.EphemeralKeyMember, _ members: JWEHeaderReader.EphemeralKeyMembers
    ) throws -> [UInt8] {
        guard member == .object else {
            throw DeviceSigningError(.malformedJWE, "The JWE header has no epk object (the ephemeral public key).")
        }
        guard !members.hasPrivateMember else {
            throw DeviceSigningError(.malformedJWE, "The JWE epk holds a private member d; it must be public.")
        }
        guard case .string(let kty) = members.kty, case .string(let crv) = members.crv else {
            throw DeviceSigningError(.malformedJWE, "The JWE epk needs string members kty and crv.")
        }
        guard kty == "EC" else {
            throw DeviceSigningError(.unsupportedKeyType, "The JWE epk has kty \"\(printable(kty))\"; only EC is.")
        }
        guard crv == "P-256" else {
            throw DeviceSigningError(.unsupportedCurve, "The JWE epk is on \"\(printable(crv))\"; only P-256 is.")
        }
        guard case .string(let x) = members.x, case .string(let y) = members.y else {
            throw DeviceSigningError(.malformedJWE, "The JWE epk needs string members x and y.")
        }
        // On the curve and not infinity is checked as the caller decodes it (PeerPublicKey).
        return try JWK.x963Point(x: x, y: y)
    }

    /// At most 32 printable ASCII characters of a value from the input, for error texts.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { (0x20..<0x7F).contains($0.value) }.prefix(32)))
    }

    /// The header JSON that `CompactJWE.encrypt` writes: no whitespace, members in the order of
    /// RFC 7520's examples (alg, kid, epk, apu, apv, enc), so that §5.5 is reproduced byte for byte.
    static func encode(
        alg: JWE.Algorithm, enc: JWE.ContentEncryption, epk: P256.KeyAgreement.PublicKey,
        kid: String?, apu: [UInt8], apv: [UInt8]
    ) -> [UInt8] {
        let key = epk.jwk
        var json = Array(#"{"alg":"#.utf8)
        JSONStringEscaping.appendQuoted(alg.rawValue, to: &json)
        if let kid {
            json.append(contentsOf: Array(#","kid":"#.utf8))
            JSONStringEscaping.appendQuoted(kid, to: &json)
        }
        json.append(contentsOf: Array(#","epk":{"kty":"EC","crv":"P-256","x":"\#(key.x)","y":"\#(key.y)"}"#.utf8))
        for (name, info) in [("apu", apu), ("apv", apv)] where !info.isEmpty {
            json.append(contentsOf: Array(#","\#(name)":""#.utf8))
            json.append(contentsOf: Base64.encodeToBytes(info, alphabet: .url))
            json.append(UInt8(ascii: "\""))
        }
        json.append(contentsOf: Array(#","enc":"#.utf8))
        JSONStringEscaping.appendQuoted(enc.rawValue, to: &json)
        json.append(UInt8(ascii: "}"))
        return json
    }
}

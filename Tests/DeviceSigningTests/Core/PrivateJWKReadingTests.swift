import Foundation
import Testing

@testable import DeviceSigning

/// A private JWK's `d` is read from the text into `SecureBytes`, never into a `String`, and the
/// JWK is as strict as before.
@Suite struct PrivateJWKReadingTests {
    /// The private JWK of `key` as text, with its `d` as a separate value.
    func privateJWK(_ key: P256.Signing.PrivateKey) throws -> (text: String, d: String) {
        let text = String(
            decoding: try key.jwkRepresentation(includingPrivateKey: true).withUnsafeBytes { Array($0) }, as: UTF8.self)
        let d = try #require(text.split(separator: "\"").drop { $0 != "d" }.dropFirst(2).first)
        return (text, String(d))
    }

    /// The same JWK with its `d` value written as `replacement` (raw JSON, quotes included).
    func replacingD(in jwk: (text: String, d: String), with replacement: String) -> [UInt8] {
        Array(jwk.text.replacingOccurrences(of: "\"\(jwk.d)\"", with: replacement).utf8)
    }

    @Test func dIsDecodedFromTheTextAndHasNoPlaceInTheMembers() throws {
        let key = try P256.Signing.PrivateKey()
        let text = try privateJWK(key).text
        let decoding = try JWK.read(Array(text.utf8), decodingPrivateMember: true)
        #expect(decoding.members["d"] == .string(""))
        guard case .decoded(let scalar) = decoding.privateMember else {
            Issue.record("d was not decoded: \(decoding.privateMember)")
            return
        }
        #expect(scalar.withUnsafeBytes { Array($0) } == (try key.rawRepresentation.withUnsafeBytes { Array($0) }))

        let publicReading = try JWK.read(Array(text.utf8), decodingPrivateMember: false)
        #expect(publicReading.members["d"] == .string(""))
        guard case .skipped = publicReading.privateMember else {
            Issue.record("a public reading took d: \(publicReading.privateMember)")
            return
        }
        #expect(try JWK(jsonRepresentation: Array(text.utf8)).publicKey() == key.publicKey)
        #expect(try P256.Signing.PrivateKey(jwkRepresentation: Array(text.utf8)).publicKey == key.publicKey)
    }

    @Test(
        "A private JWK whose d is not one strict base64url string of 32 bytes is refused",
        arguments: [
            ("d escaped", #""\u0041AAA""#, DeviceSigningError.Code.malformedEncoding),
            ("d not base64url", #""!!!!""#, .malformedEncoding),
            ("d a number", "1", .invalidKey),
            ("d an object", #"{"d":"AAAA"}"#, .invalidKey),
            ("d 31 bytes", "\"\(String(repeating: "A", count: 42))\"", .invalidKey),
        ])
    func refusedD(_ name: String, replacement: String, code: DeviceSigningError.Code) throws {
        let jwk = try privateJWK(try P256.Signing.PrivateKey())
        #expect(throws: DeviceSigningError(code, ""), "\(name)") {
            try P256.Signing.PrivateKey(jwkRepresentation: replacingD(in: jwk, with: replacement))
        }
    }

    /// `d` is checked as JSON as every string is, although it is never made a string: a bad
    /// escape, a lone surrogate or a byte that is not UTF-8 makes the text no JSON, for the
    /// private reading and for the public one that passes over `d`.
    @Test(arguments: [Array(#""\q""#.utf8), Array(#""\uD800""#.utf8), [0x22, 0x41, 0xFF, 0x41, 0x22]])
    func aDThatIsNotAJSONStringMakesTheTextNoJSON(value: [UInt8]) throws {
        let jwk = try privateJWK(try P256.Signing.PrivateKey())
        let placeholder = "\"\(jwk.d)\""
        let parts = jwk.text.components(separatedBy: placeholder)
        try #require(parts.count == 2)
        let text = Array(parts[0].utf8) + value + Array(parts[1].utf8)
        #expect(throws: DeviceSigningError(.malformedEncoding, "")) {
            try P256.Signing.PrivateKey(jwkRepresentation: text)
        }
        #expect(throws: DeviceSigningError(.malformedEncoding, "")) { try JWK(jsonRepresentation: text) }
        #expect(!JWK.isPublicOnly(text))
    }

    @Test func aDuplicateOrNestedDIsNotTheKeysD() throws {
        let jwk = try privateJWK(try P256.Signing.PrivateKey())
        let twice = Array(jwk.text.replacingOccurrences(of: "{", with: "{\"d\":\"\(jwk.d)\",").utf8)
        #expect(throws: DeviceSigningError(.malformedEncoding, "")) {
            try P256.Signing.PrivateKey(jwkRepresentation: twice)
        }
        let onlyNested = Array(
            jwk.text.replacingOccurrences(of: #""d":"\#(jwk.d)""#, with: #""k":{"d":"\#(jwk.d)"}"#).utf8)
        #expect(throws: DeviceSigningError(.invalidKey, "")) {
            try P256.Signing.PrivateKey(jwkRepresentation: onlyNested)
        }
        #expect(JWK.isPublicOnly(onlyNested))
    }

    @Test func isPublicOnlyTellsAPublicJWKFromAPrivateOne() throws {
        let key = try P256.Signing.PrivateKey()
        #expect(JWK.isPublicOnly(Array(key.publicKey.jwk.jsonString.utf8)))
        #expect(!JWK.isPublicOnly(Array(try privateJWK(key).text.utf8)))
        #expect(!JWK.isPublicOnly(Array(#"{"d":1}"#.utf8)))
        #expect(!JWK.isPublicOnly(Array("[]".utf8)))
        #expect(!JWK.isPublicOnly(Array("not json".utf8)))
        #expect(!JWK.isPublicOnly(Array(#"{"kty":"EC","kty":"EC"}"#.utf8)))
    }
}

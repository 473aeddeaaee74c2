import DeviceSigning
import Foundation
import Testing

/// The optional `use` member of a JWK (RFC 7517 §4.2): parsed, written, and never part of the
/// RFC 7638 thumbprint, so a registration's `"use":"enc"` key keeps its key id.
@Suite struct JWKUseTests {
    @Test func useIsKeptButNotInTheThumbprint() throws {
        let key = try P256.KeyAgreement.PrivateKey().publicKey
        let plain = key.jwk
        let forEncryption = plain.withUse("enc")
        #expect(forEncryption.use == "enc")
        #expect(forEncryption.thumbprint == plain.thumbprint)
        #expect(forEncryption.thumbprintInput == plain.thumbprintInput)
        #expect(forEncryption.jsonString.contains(#""use":"enc""#))
        #expect(plain.jsonString == plain.thumbprintInput)
        let parsed = try JWK(jsonRepresentation: Data(forEncryption.jsonString.utf8))
        #expect(parsed == forEncryption)
        #expect(try P256.KeyAgreement.PublicKey(jwk: parsed) == key)
    }

    @Test func aUseThatIsNotAStringIsRefused() throws {
        let jwk = try P256.Signing.PrivateKey().publicKey.jwk
        let text = #"{"crv":"P-256","kty":"EC","use":7,"x":"\#(jwk.x)","y":"\#(jwk.y)"}"#
        #expect(throws: DeviceSigningError(.malformedEncoding, "")) { try JWK(jsonRepresentation: Data(text.utf8)) }
    }

    /// A JWK built from unchecked members (the memberwise init, or `Decodable`) cannot add
    /// members to the JSON its thumbprint is taken over, nor to its written form: each value is a
    /// JSON string.
    @Test func membersAreWrittenAsJSONStrings() throws {
        let jwk = JWK(crv: #"P-256","z":"1"#, x: "a\\b", y: "c\u{1}d", use: #"enc","k":"v"#)
        for text in [jwk.thumbprintInput, jwk.jsonString] {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String])
            #expect(object["crv"] == jwk.crv && object["x"] == jwk.x && object["y"] == jwk.y, "\(text)")
            #expect(object["z"] == nil && object["k"] == nil, "\(text)")
        }
        #expect(jwk.thumbprintInput.hasPrefix(#"{"crv":"P-256\",\"z\":\"1","kty":"EC","#))
        // A checked JWK's text is as before: plain members between quotes.
        let key = try P256.Signing.PrivateKey().publicKey.jwk
        #expect(key.thumbprintInput == #"{"crv":"P-256","kty":"EC","x":"\#(key.x)","y":"\#(key.y)"}"#)
    }
}

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
}

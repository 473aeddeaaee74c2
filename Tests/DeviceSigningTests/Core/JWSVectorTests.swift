import DeviceSigning
import FetchChannelTestSupport
import FetchChannelVectors
import Foundation
import Testing

/// Vectors/jws-es256.json, through `JWSVectors` (FetchChannelVectors), the checker that
/// `fetchchannel vectors verify` runs too: the valid case verifies with its payload, every invalid
/// case fails with its `expectedError`; each failure names the vector id and name.
@Suite struct JWSVectorTests {
    func load() throws -> (JWSVectors.File, P256.Signing.PublicKey) {
        let file = try JWSVectors.decode(TestSupport.vectorFile(JWSVectors.fileName))
        return (file, try P256.Signing.PublicKey(jwk: JWK(x: file.key.x, y: file.key.y)))
    }

    @Test func everyVectorGivesItsExpectedOutcome() throws {
        let report = JWSVectors.check(try TestSupport.vectorFile(JWSVectors.fileName))
        report.recordFailures()
        let (file, _) = try load()
        #expect(file.invalid.count >= JWSVectors.minimumInvalidCases)
        #expect(report.casesChecked == file.valid.count + file.invalid.count)
    }

    @Test func signThenVerifyRoundTrips() throws {
        let key = try P256.Signing.PrivateKey()
        let compact = try CompactJWS.sign(
            header: Array(#"{"alg":"ES256","kid":"k1"}"#.utf8), payload: Array("hello".utf8), with: key)
        let parsed = try CompactJWS(parsing: compact)
        #expect(parsed.header.kid == "k1")
        #expect(try parsed.verifiedPayload(with: key.publicKey) == Data("hello".utf8))
        #expect(throws: DeviceSigningError(.invalidSignature, "")) {
            try parsed.verifiedPayload(with: P256.Signing.PrivateKey().publicKey)
        }
        #expect(throws: DeviceSigningError(.unsupportedAlgorithm, "")) {
            try CompactJWS.sign(header: Array(#"{"alg":"HS256"}"#.utf8), payload: [1], with: key)
        }
    }

    @Test func verifiesWhatRFC7515KeySigns() throws {
        let key = try P256.Signing.PrivateKey(pemRepresentation: TestSupport.keyFile("rfc7515-a3-p256.pem"))
        let (_, publicKey) = try load()
        #expect(key.publicKey == publicKey)
        let compact = try CompactJWS.sign(header: Array(#"{"alg":"ES256"}"#.utf8), payload: Array("x".utf8), with: key)
        #expect(try CompactJWS(parsing: compact).verifiedPayload(with: publicKey) == Data("x".utf8))
    }
}

import DeviceSigning
import Foundation
import Testing

@Suite struct JWSVectorTests {
    struct File: Decodable {
        let key: Key
        let valid: [Valid]
        let invalid: [Invalid]
    }
    struct Key: Decodable { let x: String; let y: String }
    struct Valid: Decodable { let id: Int; let name: String; let compact: String; let expectedPayloadBase64url: String }
    struct Invalid: Decodable { let id: Int; let name: String; let compact: String; let expectedError: String }

    func load() throws -> (File, P256.Signing.PublicKey) {
        let file = try JSONDecoder().decode(File.self, from: TestSupport.vectorFile("jws-es256.json"))
        return (file, try P256.Signing.PublicKey(jwk: JWK(x: file.key.x, y: file.key.y)))
    }

    /// Parses and verifies; returns the payload or the error code.
    enum Outcome { case success(Data), failure(String) }

    func outcome(_ compact: String, key: P256.Signing.PublicKey) -> Outcome {
        do {
            return .success(try CompactJWS(parsing: compact).verifiedPayload(with: key))
        } catch let error as DeviceSigningError {
            return .failure(error.code.rawValue)
        } catch {
            return .failure("unexpected \(error)")
        }
    }

    @Test func validVectorsVerify() throws {
        let (file, key) = try load()
        for vector in file.valid {
            guard case .success(let payload) = outcome(vector.compact, key: key) else {
                Issue.record("vector \(vector.id) \(vector.name) did not verify")
                continue
            }
            #expect(Array(payload) == TestSupport.base64url(vector.expectedPayloadBase64url), "vector \(vector.id) \(vector.name)")
        }
    }

    @Test func invalidVectorsAreRejectedForTheirReason() throws {
        let (file, key) = try load()
        #expect(file.invalid.count >= 15)
        for vector in file.invalid {
            switch outcome(vector.compact, key: key) {
            case .success:
                Issue.record("vector \(vector.id) \(vector.name) verified but must fail with \(vector.expectedError)")
            case .failure(let code):
                #expect(code == vector.expectedError, "vector \(vector.id) \(vector.name)")
            }
        }
    }

    @Test func signThenVerifyRoundTrips() throws {
        let key = try P256.Signing.PrivateKey()
        let compact = try CompactJWS.sign(header: Array(#"{"alg":"ES256","kid":"k1"}"#.utf8), payload: Array("hello".utf8), with: key)
        let parsed = try CompactJWS(parsing: compact)
        #expect(parsed.header.kid == "k1")
        #expect(try parsed.verifiedPayload(with: key.publicKey) == Data("hello".utf8))
        #expect(throws: DeviceSigningError(.invalidSignature, "")) { try parsed.verifiedPayload(with: P256.Signing.PrivateKey().publicKey) }
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

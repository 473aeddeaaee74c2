import DeviceSigning
import Foundation
import Testing

/// Vectors/device-signature.json: known answers derived independently (Python), checked here.
@Suite struct DeviceSignatureVectorTests {
    typealias F = DeviceSignatureFixtures

    @Test func fixtureKeyIsTheRFC7515ExampleKey() throws {
        let vectors = try F.loadVectors()
        #expect(vectors.key.x == "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU")
        #expect(vectors.key.y == "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
        #expect(vectors.key.comment.contains("TEST ONLY"))
        #expect(!vectors.testOnly.isEmpty)
        // PrivateKey(jwkRepresentation:) checks that d gives x and y.
        let key = try F.fixtureKey()
        #expect(key.publicKey.jwk.x == vectors.key.x && key.publicKey.jwk.y == vectors.key.y)
    }

    @Test func positiveCasesAreReproducedByTheSigner() throws {
        let vectors = try F.loadVectors()
        let key = try F.fixtureKey()
        #expect(vectors.positive.count >= 5)
        for vector in vectors.positive {
            let signer = try DeviceSignatureSigner(key: key, dispatchTargetId: vector.dispatchTargetId, clock: ManualWallClock(millis: 0))
            let value = try signer.headerValue(requestId: vector.requestId, creationTimeInEpochMillis: vector.creationTimeInEpochMillis)
            let parts = F.parts(value)
            try #require(parts.count == 3, "\(vector.name)")
            #expect(parts[0] == vector.encodedHeader, "\(vector.name): encoded header")
            #expect(parts[1] == vector.encodedPayload, "\(vector.name): encoded payload")
            #expect("\(parts[0]).\(parts[1])" == vector.signingInput, "\(vector.name): signing input")
            #expect(F.base64url(parts[0]) == Data(vector.headerJSON.utf8), "\(vector.name): header JSON")
            #expect(F.base64url(parts[1]) == Data(vector.payloadJSON.utf8), "\(vector.name): payload JSON")
            // The vector's own parts agree with its JSON (the file is consistent).
            #expect(F.base64url(vector.encodedPayload) == Data(vector.payloadJSON.utf8), "\(vector.name): file consistency")
            #expect(vector.compact == "\(vector.signingInput).\(vector.signature)", "\(vector.name): file consistency")
            // Our (randomized) signature verifies; the file's (RFC 6979) signature is checked below.
            #expect(throws: Never.self, "\(vector.name)") { try CompactJWS(parsing: value).verifiedPayload(with: key.publicKey) }
        }
    }

    @Test func positiveCasesVerify() throws {
        let vectors = try F.loadVectors()
        let key = try F.fixtureKey()
        for vector in vectors.positive {
            let clock = ManualWallClock(millis: vector.verifierTimeMillis)
            let verifier = try DeviceSignatureVerifier(toleranceMillis: vectors.verifier.toleranceMillis, clock: clock,
                                                       replayCacheCapacity: vectors.verifier.replayCacheCapacity) { id in
                vectors.verifier.dispatchTargets.contains(id) ? key.publicKey : nil
            }
            let result = verifier.verify(vector.compact)
            let expected = VerifiedDeviceSignature(dispatchTargetId: vector.dispatchTargetId, requestId: vector.requestId,
                                                   creationTimeMillis: vector.creationTimeInEpochMillis,
                                                   serverTimeMillis: vector.verifierTimeMillis)
            #expect(result == .success(expected), "\(vector.name)")
            // The signature over the signing input, through the public key API alone.
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(F.base64url(vector.signature), "\(vector.name)"))
            #expect(key.publicKey.isValidSignature(signature, for: Array(vector.signingInput.utf8)), "\(vector.name)")
        }
    }

    @Test func verificationCasesGiveTheExpectedOutcome() throws {
        let vectors = try F.loadVectors()
        let key = try F.fixtureKey().publicKey
        let rejections = vectors.verification.filter { $0.expected != "ACCEPT" }
        #expect(rejections.count >= 12)
        #expect(Set(vectors.verification.map(\.name)).count == vectors.verification.count, "case names are unique")
        let knownCodes: Set = ["ACCEPT", "MALFORMED_REQUEST", "INVALID_SIGNATURE", "UNKNOWN_DISPATCH_TARGET",
                               "CLOCK_SKEW_TOO_BIG", "REPLAYED_REQUEST"]
        var sessions: [String: (ManualWallClock, DeviceSignatureVerifier)] = [:]
        func makeVerifier(at time: Int64) throws -> (ManualWallClock, DeviceSignatureVerifier) {
            let clock = ManualWallClock(millis: time)
            let verifier = try DeviceSignatureVerifier(toleranceMillis: vectors.verifier.toleranceMillis, clock: clock,
                                                       replayCacheCapacity: vectors.verifier.replayCacheCapacity) { id in
                vectors.verifier.dispatchTargets.contains(id) ? key : nil
            }
            return (clock, verifier)
        }
        for vector in vectors.verification {
            #expect(knownCodes.contains(vector.expected), "\(vector.name): unknown expected code \(vector.expected)")
            let (clock, verifier): (ManualWallClock, DeviceSignatureVerifier)
            if let session = vector.session {
                if let existing = sessions[session] {
                    (clock, verifier) = existing
                } else {
                    (clock, verifier) = try makeVerifier(at: vector.verifierTimeMillis)
                    sessions[session] = (clock, verifier)
                }
                clock.set(millis: vector.verifierTimeMillis)
            } else {
                (clock, verifier) = try makeVerifier(at: vector.verifierTimeMillis)
            }
            let outcome: String
            switch verifier.verify(vector.compact) {
            case .success: outcome = "ACCEPT"
            case .failure(let rejection): outcome = rejection.code
            }
            #expect(outcome == vector.expected, "\(vector.name): \(vector.comment)")
        }
        #expect(sessions.count >= 1, "the replay session ran")
    }
}

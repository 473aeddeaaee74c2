import DeviceSigning
import FetchChannelWire
import Foundation

/// `Vectors/device-signature.json`, known answers derived independently (Python):
/// - the fixture key is the RFC 7515 A.3 example key, marked TEST ONLY, and its `d` gives its x/y;
/// - `DeviceSignatureSigner` reproduces every positive case's header, payload and signing input
///   byte for byte, and what it signs verifies;
/// - `DeviceSignatureVerifier` accepts every positive case, and the file's (RFC 6979) signature
///   verifies through the public key API;
/// - every verification case gets its expected outcome (sessions share one verifier, in order).
public enum DeviceSignatureVectors: VectorFileChecker {
    public static let fileName = "device-signature.json"
    public static let summary = "Device-Signature known answers and verification"
    public static let minimumPositiveCases = 5
    public static let minimumRejections = 12
    /// The verification case signed with ``File/otherKey``.
    static let otherKeyCaseName = "signature-by-another-key"
    /// The x and y of the RFC 7515 A.3 key, which the file must use.
    static let rfc7515X = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
    static let rfc7515Y = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
    static let knownOutcomes = Set(
        ["ACCEPT"]
            + [
                WireErrorCode.malformedRequest, .invalidSignature, .unknownDispatchTarget, .clockSkewTooBig,
                .replayedRequest,
            ]
            .map(\.rawValue))

    public struct File: Decodable, Sendable {
        public struct PrivateJWK: Decodable, Sendable {
            public let kty, crv, x, y, d, comment: String
        }

        /// The key that signs the one case made with a key not registered for its kid.
        public struct PublicJWK: Decodable, Sendable {
            public let kty, crv, x, y, comment: String
        }

        public struct Verifier: Decodable, Sendable {
            public let toleranceMillis: Int64
            public let replayCacheCapacity: Int
            public let dispatchTargets: [String]
        }

        public struct Positive: Decodable, Sendable {
            public let name: String
            public let dispatchTargetId: String
            public let requestId: String
            public let creationTimeInEpochMillis: Int64
            public let headerJSON: String
            public let payloadJSON: String
            public let encodedHeader: String
            public let encodedPayload: String
            public let signingInput: String
            public let signature: String
            public let compact: String
            public let verifierTimeMillis: Int64
        }

        public struct Verification: Decodable, Sendable {
            public let name: String
            public let comment: String
            public let compact: String
            public let expected: String
            public let verifierTimeMillis: Int64
            public let session: String?
        }

        public let testOnly: String
        public let key: PrivateJWK
        public let otherKey: PublicJWK
        public let verifier: Verifier
        public let positive: [Positive]
        public let verification: [Verification]

        /// The file's signing key (RFC 7515 A.3, TEST ONLY); the JWK parser checks that d gives x and y.
        public func signingKey() throws -> P256.Signing.PrivateKey {
            let json = #"{"kty":"\#(key.kty)","crv":"\#(key.crv)","x":"\#(key.x)","y":"\#(key.y)","d":"\#(key.d)"}"#
            return try P256.Signing.PrivateKey(jwkRepresentation: Array(json.utf8))
        }
    }

    public static func check(_ file: File, into report: inout VectorFileReport) {
        // The fixture key.
        report.expect(file.key.x == rfc7515X && file.key.y == rfc7515Y, "key: not the RFC 7515 A.3 example key")
        report.expect(file.key.comment.contains("TEST ONLY"), "key: the comment must say TEST ONLY")
        report.expect(!file.testOnly.isEmpty, "testOnly: the key warning is missing")
        let key: P256.Signing.PrivateKey
        do {
            key = try file.signingKey()
        } catch {
            report.fail("key: d does not give x and y, or is not a P-256 key: \(error)")
            return
        }
        report.expect(
            key.publicKey.jwk.x == file.key.x && key.publicKey.jwk.y == file.key.y, "key: d does not give x and y")

        checkPositiveCases(file, key: key, into: &report)
        checkVerificationCases(file, key: key.publicKey, into: &report)
        checkOtherKeyCase(file, into: &report)
    }

    /// The case signed with another key is refused for that alone: its signature verifies with
    /// `otherKey`, so an `INVALID_SIGNATURE` there is not the outcome of a garbled signature.
    private static func checkOtherKeyCase(_ file: File, into report: inout VectorFileReport) {
        let name = otherKeyCaseName
        report.expect(file.otherKey.comment.contains("TEST ONLY"), "otherKey: the comment must say TEST ONLY")
        guard let vector = file.verification.first(where: { $0.name == name }) else {
            report.fail("\(name): the case signed with otherKey is missing")
            return
        }
        let jwk = JWK(kty: file.otherKey.kty, crv: file.otherKey.crv, x: file.otherKey.x, y: file.otherKey.y)
        do {
            _ = try CompactJWS(parsing: vector.compact).verifiedPayload(with: P256.Signing.PublicKey(jwk: jwk))
        } catch {
            report.fail("\(name): its signature does not verify with otherKey: \(error)")
        }
    }

    static func makeVerifier(_ file: File, key: P256.Signing.PublicKey, at time: Int64) throws -> (
        ManualWallClock, DeviceSignatureVerifier
    ) {
        let clock = ManualWallClock(millis: time)
        let targets = Set(file.verifier.dispatchTargets)
        let verifier = try DeviceSignatureVerifier(
            toleranceMillis: file.verifier.toleranceMillis, clock: clock,
            replayCacheCapacity: file.verifier.replayCacheCapacity
        ) { id in
            targets.contains(id) ? key : nil
        }
        return (clock, verifier)
    }

    private static func checkPositiveCases(
        _ file: File, key: P256.Signing.PrivateKey, into report: inout VectorFileReport
    ) {
        report.expect(atLeast: minimumPositiveCases, "positive cases", in: file.positive.count)
        for vector in file.positive {
            report.casesChecked += 1
            let name = vector.name
            // The signer reproduces the known answer.
            do {
                let signer = try DeviceSignatureSigner(
                    key: key, dispatchTargetId: vector.dispatchTargetId, clock: ManualWallClock(millis: 0))
                let value = try signer.headerValue(
                    requestId: vector.requestId, creationTimeInEpochMillis: vector.creationTimeInEpochMillis)
                let parts = value.split(separator: ".", omittingEmptySubsequences: false)
                if parts.count == 3 {
                    report.expect(parts[0] == vector.encodedHeader, "\(name): encoded header")
                    report.expect(parts[1] == vector.encodedPayload, "\(name): encoded payload")
                    report.expect("\(parts[0]).\(parts[1])" == vector.signingInput, "\(name): signing input")
                    report.expect(
                        VectorDecoding.base64url(parts[0]) == Data(vector.headerJSON.utf8), "\(name): header JSON")
                    report.expect(
                        VectorDecoding.base64url(parts[1]) == Data(vector.payloadJSON.utf8), "\(name): payload JSON")
                } else {
                    report.fail("\(name): the signer's value has \(parts.count) parts, not 3")
                }
                // Our (randomized) signature verifies; the file's (RFC 6979) signature is checked below.
                report.expect(
                    (try? CompactJWS(parsing: value).verifiedPayload(with: key.publicKey)) != nil,
                    "\(name): the signer's value does not verify")
            } catch {
                report.fail("\(name): the signer refused the inputs: \(error)")
            }
            // The file is consistent with itself.
            report.expect(
                VectorDecoding.base64url(vector.encodedPayload) == Data(vector.payloadJSON.utf8),
                "\(name): file consistency (encodedPayload)")
            report.expect(
                vector.compact == "\(vector.signingInput).\(vector.signature)", "\(name): file consistency (compact)")

            // The verifier accepts it, at the case's time.
            do {
                let (_, verifier) = try makeVerifier(file, key: key.publicKey, at: vector.verifierTimeMillis)
                let expected = VerifiedDeviceSignature(
                    dispatchTargetId: vector.dispatchTargetId, requestId: vector.requestId,
                    creationTimeMillis: vector.creationTimeInEpochMillis,
                    serverTimeMillis: vector.verifierTimeMillis)
                switch verifier.verify(vector.compact) {
                case .success(let verified):
                    report.expect(verified == expected, "\(name): accepted, but with other fields: \(verified)")
                case .failure(let rejection):
                    report.fail("\(name): rejected with \(rejection.code), expected ACCEPT")
                }
            } catch {
                report.fail("\(name): the verifier cannot be configured: \(error)")
            }
            // The signature over the signing input, through the public key API alone.
            if let raw = VectorDecoding.base64url(vector.signature),
                let signature = try? P256.Signing.ECDSASignature(rawRepresentation: raw)
            {
                report.expect(
                    key.publicKey.isValidSignature(signature, for: Array(vector.signingInput.utf8)),
                    "\(name): the file's signature does not verify over the signing input")
            } else {
                report.fail("\(name): signature is not base64url of a 64-byte r||s")
            }
        }
    }

    private static func checkVerificationCases(
        _ file: File, key: P256.Signing.PublicKey, into report: inout VectorFileReport
    ) {
        let rejections = file.verification.filter { $0.expected != "ACCEPT" }
        report.expect(atLeast: minimumRejections, "rejection cases", in: rejections.count)
        report.expect(
            Set(file.verification.map(\.name)).count == file.verification.count,
            "verification case names are not unique")
        var sessions: [String: (ManualWallClock, DeviceSignatureVerifier)] = [:]
        for vector in file.verification {
            report.casesChecked += 1
            report.expect(
                knownOutcomes.contains(vector.expected), "\(vector.name): unknown expected code \(vector.expected)")
            let clock: ManualWallClock
            let verifier: DeviceSignatureVerifier
            do {
                if let session = vector.session {
                    if let existing = sessions[session] {
                        (clock, verifier) = existing
                    } else {
                        (clock, verifier) = try makeVerifier(file, key: key, at: vector.verifierTimeMillis)
                        sessions[session] = (clock, verifier)
                    }
                    clock.set(millis: vector.verifierTimeMillis)
                } else {
                    (clock, verifier) = try makeVerifier(file, key: key, at: vector.verifierTimeMillis)
                }
            } catch {
                report.fail("\(vector.name): the verifier cannot be configured: \(error)")
                continue
            }
            let outcome = describe(verifier.verify(vector.compact))
            report.expect(
                outcome == vector.expected,
                "\(vector.name): got \(outcome), expected \(vector.expected) (\(vector.comment))")
        }
        report.expect(!sessions.isEmpty, "no replay session ran")
    }

    private static func describe(_ result: Result<VerifiedDeviceSignature, DeviceSignatureRejection>) -> String {
        switch result {
        case .success: "ACCEPT"
        case .failure(let rejection): rejection.code
        }
    }
}

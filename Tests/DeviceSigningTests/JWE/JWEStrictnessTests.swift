internal import COpenSSL
import FetchChannelVectors
import Foundation
import Testing
@testable import DeviceSigning

/// What the decrypter refuses and how: no oracle between failures after the header, the `epk`
/// checked without any private key, and the duplicate-member scan of the header.
@Suite struct JWEStrictnessTests {
    /// A bad tag, bad padding under a valid tag, a failed key unwrap and a wrong key: one code, one
    /// reason, no OpenSSL error text, and nothing left in OpenSSL's error queue.
    @Test func everyFailureAfterTheHeaderIsTheSameError() throws {
        let file = try JWEFixtures.file()
        var errors: [DeviceSigningError] = []
        for name in ["flipped-tag-cbc", "bad-padding-valid-tag", "flipped-wrapped-key", "wrong-recipient-key",
                     "flipped-tag-gcm", "flipped-iv", "header-changed"] {
            let vector = try JWEFixtures.vector(name, in: file)
            let key = try JWEFixtures.key(vector.key, in: file)
            if let error = expectError(.decryptionFailed, { try JWE.decrypt(vector.compact, with: key) }) {
                errors.append(error)
            }
            #expect(ERR_peek_error() == 0, "\(name) left an OpenSSL error queued")
        }
        #expect(errors.count == 7)
        #expect(Set(errors.map(\.description)).count == 1, "\(errors.map(\.description))")
        #expect(errors.allSatisfy { $0.openSSLErrors.isEmpty })
    }

    /// The ephemeral key is checked when the JWE is parsed, before a private key is even given.
    @Test func anEPKOffTheCurveIsRefusedBeforeAnyKeyAgreement() throws {
        let file = try JWEFixtures.file()
        for (name, code) in [("epk-invalid-curve", DeviceSigningError.Code.invalidKey), ("epk-zero-point", .invalidKey),
                             ("epk-p384", .unsupportedCurve), ("epk-okp", .unsupportedKeyType)] {
            let vector = try JWEFixtures.vector(name, in: file)
            expectError(code) { try CompactJWE(parsing: vector.compact) }
        }
    }

    @Test func compressionCritAndForeignAlgorithmsAreRefused() throws {
        let file = try JWEFixtures.file()
        for (name, code) in [("zip", DeviceSigningError.Code.unsupportedAlgorithm), ("crit", .malformedJWE),
                             ("alg-none", .unsupportedAlgorithm), ("alg-dir", .unsupportedAlgorithm),
                             ("alg-rsa-oaep-256", .unsupportedAlgorithm), ("duplicate-alg", .malformedJWE)] {
            let vector = try JWEFixtures.vector(name, in: file)
            expectError(code) { try CompactJWE(parsing: vector.compact) }
        }
    }

    @Test(arguments: [
        (#"{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}"#, JWEDuplicateMemberScan.Outcome.unique),
        (#" { "a" : [ 1 , -0.5e+3 , true , false , null , "x\"y" ] } "#, .unique),
        (#"{"a":1,"a":2}"#, .duplicate("a")),
        (#"{"alg":1,"\u0061lg":2}"#, .duplicate("alg")),
        (#"{"\ud83d\udd11":1,"🔑":2}"#, .duplicate("🔑")),
        (#"{"x":[{"k":1,"k":2}]}"#, .duplicate("k")),
        (#"{"epk":{"x":"1","y":"2","x":"3"}}"#, .duplicate("x")),
        (#"{"a":1,}"#, .malformed),
        (#"{"a":01}"#, .malformed),
        (#"{"a":1} x"#, .malformed),
        ("{\"a\":\"tab\tinside\"}", .malformed),
        (#"{"a":"\x"}"#, .malformed),
        (#"{"a":tru}"#, .malformed),
        (#"{"a""#, .malformed),
        ("", .malformed),
    ])
    func duplicateMemberScan(json: String, expected: JWEDuplicateMemberScan.Outcome) {
        #expect(JWEDuplicateMemberScan.scan(Array(json.utf8)) == expected, "\(json)")
    }

    @Test func deepNestingIsRefusedWithoutRecursingWithoutBound() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(JWEDuplicateMemberScan.scan(Array(deep.utf8)) == .malformed)
        let fits = String(repeating: "[", count: 15) + String(repeating: "]", count: 15)
        #expect(JWEDuplicateMemberScan.scan(Array(fits.utf8)) == .unique)
    }

    /// Sizes are checked on the text, before anything is decoded or allocated for it.
    @Test func oversizedInputIsRefusedBeforeDecoding() throws {
        let tooLong = String(repeating: "A", count: CompactJWE.maximumLength + 1)
        expectError(.inputTooLarge) { try CompactJWE(parsing: tooLong) }
        let key = try P256.KeyAgreement.PrivateKey()
        let compact = try JWE.encrypt(Data("x".utf8), to: key.publicKey)
        var bigTag = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        bigTag[4] = String(repeating: "!", count: 44)   // not even base64url: the length is checked first
        expectError(.inputTooLarge) { try CompactJWE(parsing: bigTag.joined(separator: ".")) }
    }
}

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
        for name in [
            "flipped-tag-cbc", "bad-padding-valid-tag", "flipped-wrapped-key", "wrong-recipient-key",
            "flipped-tag-gcm", "flipped-iv", "header-changed",
        ] {
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
        for (name, code) in [
            ("epk-invalid-curve", DeviceSigningError.Code.invalidKey), ("epk-zero-point", .invalidKey),
            ("epk-p384", .unsupportedCurve), ("epk-okp", .unsupportedKeyType),
        ] {
            let vector = try JWEFixtures.vector(name, in: file)
            expectError(code) { try CompactJWE(parsing: vector.compact) }
        }
    }

    @Test func compressionCritAndForeignAlgorithmsAreRefused() throws {
        let file = try JWEFixtures.file()
        for (name, code) in [
            ("zip", DeviceSigningError.Code.unsupportedAlgorithm), ("crit", .malformedJWE),
            ("alg-none", .unsupportedAlgorithm), ("alg-dir", .unsupportedAlgorithm),
            ("alg-rsa-oaep-256", .unsupportedAlgorithm), ("duplicate-alg", .malformedJWE),
        ] {
            let vector = try JWEFixtures.vector(name, in: file)
            expectError(code) { try CompactJWE(parsing: vector.compact) }
        }
    }

    /// The header goes through the package's one duplicate-member check (StrictJSON), which
    /// compares names after unescaping and looks inside nested objects and arrays.
    @Test(arguments: [
        (#"{"alg":"ECDH-ES","enc":"A256GCM","alg":"ECDH-ES"}"#, "alg"),
        (#"{"alg":"ECDH-ES","\u0061lg":"ECDH-ES","enc":"A256GCM"}"#, "alg"),
        (#"{"alg":"ECDH-ES","enc":"A256GCM","epk":{"kty":"EC","x":"1","x":"3"}}"#, "x"),
    ])
    func duplicateHeaderMembersAreMalformed(json: String, name: String) {
        #expect(throws: DeviceSigningError.self) { try JWEHeader(json: Array(json.utf8)) }
        do {
            _ = try JWEHeader(json: Array(json.utf8))
        } catch let error as DeviceSigningError {
            let named = error.reason.contains("\"\(name)\" appears more than once")
            #expect(error.code == .malformedJWE && named, "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func aHeaderThatIsNotJSONIsMalformed() {
        for json in [#"{"alg":"ECDH-ES",}"#, #"{"alg""#, "", #"{"alg":"ECDH-ES"} x"#] {
            #expect(throws: DeviceSigningError(.malformedJWE, ""), "\(json)") { try JWEHeader(json: Array(json.utf8)) }
        }
    }

    /// Sizes are checked on the text, before anything is decoded or allocated for it.
    @Test func oversizedInputIsRefusedBeforeDecoding() throws {
        let tooLong = String(repeating: "A", count: CompactJWE.maximumLength + 1)
        expectError(.inputTooLarge) { try CompactJWE(parsing: tooLong) }
        let key = try P256.KeyAgreement.PrivateKey()
        let compact = try JWE.encrypt(Data("x".utf8), to: key.publicKey)
        var bigTag = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        bigTag[4] = String(repeating: "!", count: 44)  // not even base64url: the length is checked first
        expectError(.inputTooLarge) { try CompactJWE(parsing: bigTag.joined(separator: ".")) }
    }

    /// A wrapped key that does not unwrap goes on as a random content key of the right size
    /// (RFC 7516 §11.5), so the content's tag check fails it as it fails any altered part: the
    /// steps, and so the time, do not tell the two apart. The right KEK still unwraps the key.
    @Test func aKeyThatDoesNotUnwrapBecomesARandomContentKey() throws {
        let kek = SecureBytes([UInt8](repeating: 7, count: 32))
        let contentKey = SecureBytes([UInt8](repeating: 9, count: 32))
        let wrapped = try JWEBackend.wrap(contentKey, kek: kek)
        let unwrapped = try CompactJWE.unwrappedOrRandom(wrapped, kek: kek, keyBytes: 32)
        #expect(unwrapped.withUnsafeBytes { Array($0) } == [UInt8](repeating: 9, count: 32))
        let wrongKEK = SecureBytes([UInt8](repeating: 8, count: 32))
        let first = try CompactJWE.unwrappedOrRandom(wrapped, kek: wrongKEK, keyBytes: 32)
        let second = try CompactJWE.unwrappedOrRandom(wrapped, kek: wrongKEK, keyBytes: 32)
        #expect(first.count == 32 && second.count == 32)
        #expect(first.withUnsafeBytes { Array($0) } != second.withUnsafeBytes { Array($0) }, "random each time")
        #expect(ERR_peek_error() == 0, "the failed unwrap left an OpenSSL error queued")
        // The unwrap itself says nil and words nothing: an error built from OpenSSL's queue (its
        // text formatted) would cost the failed unwrap more than a failed tag costs.
        #expect(try JWEBackend.unwrap(wrapped, kek: wrongKEK) == nil)
        #expect(ERR_peek_error() == 0)
    }

    /// The Concat KDF's public entry refuses sizes it cannot encode, before writing OtherInfo
    /// (whose length in bits overflowed and stopped the process for a huge `keyBytes`).
    @Test func theConcatKDFRefusesSizesItCannotEncode() {
        let z = SecureBytes([UInt8](repeating: 1, count: 32))
        for keyBytes in [0, 65, Int.max / 4, -1] {
            expectError(.invalidKey) {
                try ConcatKDF.deriveKey(sharedSecret: z, algorithmID: "A128GCM", keyBytes: keyBytes)
            }
        }
        let longName = String(repeating: "A", count: ConcatKDF.maximumAlgorithmIDBytes + 1)
        expectError(.inputTooLarge) { try ConcatKDF.deriveKey(sharedSecret: z, algorithmID: longName, keyBytes: 16) }
    }
}

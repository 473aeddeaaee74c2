import FetchChannelTestSupport
import Foundation
import Testing

@testable import DeviceSigning

@Suite(.dedicatedThread) struct KeyStoreEncryptedPrivateKeyTests {
    typealias PrivateKey = P256.Signing.PrivateKey

    @Test(arguments: [KeyStoreFixtures.cheapKDF, .pbkdf2SHA256(iterations: 100_000)])
    func roundTripPreservesTheKey(kdf: KeyDerivation) throws {
        let key = try PrivateKey()
        let pem = try key.encryptedPEMRepresentation(passphrase: secret("correct horse"), kdf: kdf)
        #expect(pem.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"))
        #expect(pem.hasSuffix("-----END ENCRYPTED PRIVATE KEY-----\n"))
        let opened = try PrivateKey(encryptedPEM: pem, passphrase: secret("correct horse"))
        #expect(opened.publicKey == key.publicKey)
        #expect(try opened.rawRepresentation.constantTimeEquals(key.rawRepresentation))
        let signature = try opened.signature(for: Array("message".utf8))
        #expect(key.publicKey.isValidSignature(signature, for: Array("message".utf8)))
    }

    @Test func defaultCostIsScryptTwoToTheFourteenAndOpens() throws {
        #expect(KeyDerivation.default == .scrypt(n: 16384, r: 8, p: 1))
        #expect(KeyDerivation.default.memoryBytes == 128 * 8 * (16384 + 2 + 1))
        let key = try PrivateKey()
        let pem = try key.encryptedPEMRepresentation(passphrase: secret("pass"))
        let header = try #require(TestPEM.der(pem)).withUnsafeBytes { try PBES2Parameters(der: $0) }
        #expect(header == PBES2Parameters(kdf: .scrypt(n: 16384, r: 8, p: 1), cipher: "AES-256-CBC"))
        #expect(try PrivateKey(encryptedPEM: pem, passphrase: secret("pass")).publicKey == key.publicKey)
    }

    @Test func pbkdf2DefaultWritesSixHundredThousandIterationsOfHMACSHA256() throws {
        let pem = try PrivateKey().encryptedPEMRepresentation(passphrase: secret("pass"), kdf: .pbkdf2Default)
        let header = try #require(TestPEM.der(pem)).withUnsafeBytes { try PBES2Parameters(der: $0) }
        #expect(header == PBES2Parameters(kdf: .pbkdf2(iterations: 600_000, prf: "SHA-256"), cipher: "AES-256-CBC"))
    }

    @Test func everyEncryptionUsesAFreshSaltAndIV() throws {
        let key = try PrivateKey()
        let first = try key.encryptedPEMRepresentation(passphrase: secret("pass"), kdf: KeyStoreFixtures.cheapKDF)
        let second = try key.encryptedPEMRepresentation(passphrase: secret("pass"), kdf: KeyStoreFixtures.cheapKDF)
        #expect(first != second)
    }

    @Test func wrongPassphraseIsWrongPassphrase() throws {
        let pem = try PrivateKey().encryptedPEMRepresentation(
            passphrase: secret("right"), kdf: KeyStoreFixtures.cheapKDF)
        expectError(.wrongPassphrase) { try PrivateKey(encryptedPEM: pem, passphrase: secret("wrong")) }
        expectError(.wrongPassphrase) {
            try PrivateKey(encryptedPEM: KeyStoreFixtures.p384Encrypted, passphrase: secret("wrong"))
        }
    }

    /// A damaged ciphertext opened with the right passphrase: a bit of the block before the last,
    /// which CBC carries into the same bit of the last block's padding (the key's 138 bytes leave
    /// six bytes of padding, the last block's bytes 10 to 15), spoils the padding for certain. (A
    /// byte of the last block itself garbles the whole block, whose padding is then valid once in
    /// 256.) The shim decrypts into a buffer it clears on every path (OpenSSL's PKCS8_decrypt left
    /// the decrypted blocks, the key among them, in freed memory when the padding was bad); the
    /// outcome is the error of a failed decryption.
    @Test(arguments: [17, 19, 22])
    func aDamagedCiphertextIsAFailedDecryption(offsetFromEnd: Int) throws {
        let pem = try PrivateKey().encryptedPEMRepresentation(
            passphrase: secret("pass"), kdf: KeyStoreFixtures.cheapKDF)
        var der = try #require(TestPEM.der(pem))
        der[der.count - offsetFromEnd] ^= 0x01  // inside the ciphertext, the last OCTET STRING
        expectError(.wrongPassphrase) {
            try PrivateKey(
                encryptedPEM: TestPEM.pem(label: "ENCRYPTED PRIVATE KEY", der: der), passphrase: secret("pass"))
        }
    }

    /// `der` (an EncryptedPrivateKeyInfo, `SEQUENCE { AlgorithmIdentifier, OCTET STRING }`) with
    /// an empty encrypted-data octet string: nothing to decrypt, so not a passphrase's fault.
    static func withoutEncryptedData(_ der: [UInt8]) -> [UInt8] {
        // The outer header is 30 81 xx or 30 82 xx xx; the algorithm identifier follows it.
        let outerHeader = der[1] == 0x81 ? 3 : 4
        let algorithmLength =
            Int(der[outerHeader + 1]) == 0x81 ? Int(der[outerHeader + 2]) + 3 : Int(der[outerHeader + 1]) + 2
        let content = Array(der[outerHeader..<(outerHeader + algorithmLength)]) + [0x04, 0x00]
        return (content.count < 128 ? [0x30] : [0x30, 0x81]) + [UInt8(content.count)] + content
    }

    @Test func truncatedOrGarbageInputIsMalformed() throws {
        let pem = try PrivateKey().encryptedPEMRepresentation(
            passphrase: secret("pass"), kdf: KeyStoreFixtures.cheapKDF)
        let der = try #require(TestPEM.der(pem))
        // Seeded: a run that fails fails again, with the same bytes.
        var random = SplitMix64(seed: 0x5EED_0001)
        let cases: [(String, String)] = [
            ("first half of the text", String(pem.prefix(pem.count / 2))),
            ("DER cut short", TestPEM.pem(label: "ENCRYPTED PRIVATE KEY", der: Array(der.prefix(der.count - 20)))),
            ("DER with a trailing byte", TestPEM.pem(label: "ENCRYPTED PRIVATE KEY", der: der + [0])),
            (
                "random DER",
                TestPEM.pem(
                    label: "ENCRYPTED PRIVATE KEY",
                    der: (0..<200).map { _ in UInt8.random(in: 0...255, using: &random) })
            ),
            ("no encrypted data", TestPEM.pem(label: "ENCRYPTED PRIVATE KEY", der: Self.withoutEncryptedData(der))),
            ("not PEM", "garbage \u{0} \u{7F} text"),
            ("empty", ""),
            ("bad base64", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n@@@@\n-----END ENCRYPTED PRIVATE KEY-----\n"),
        ]
        for (name, text) in cases {
            let error = expectError(.malformedEncoding) {
                try PrivateKey(encryptedPEM: text, passphrase: secret("pass"))
            }
            #expect(error != nil, "case: \(name)")
        }
    }

    @Test func otherCurvesAndKeyTypesHaveTheirOwnCodes() throws {
        let pass = secret(KeyStoreFixtures.fixturePassphrase)
        expectError(.unsupportedCurve) {
            try PrivateKey(encryptedPEM: KeyStoreFixtures.p384Encrypted, passphrase: pass)
        }
        expectError(.unsupportedKeyType) {
            try PrivateKey(encryptedPEM: KeyStoreFixtures.rsaEncrypted, passphrase: pass)
        }
    }

    @Test func anUnencryptedPEMIsNotAnEncryptedOne() throws {
        let plain = try String(decoding: PrivateKey().pemRepresentation.withUnsafeBytes { Array($0) }, as: UTF8.self)
        expectError(.malformedEncoding) { try PrivateKey(encryptedPEM: plain, passphrase: secret("pass")) }
    }

    @Test func passphraseMustBeNonEmptyAndBounded() throws {
        let key = try PrivateKey()
        expectError(.passphraseRequired) {
            try key.encryptedPEMRepresentation(passphrase: secret(""), kdf: KeyStoreFixtures.cheapKDF)
        }
        expectError(.inputTooLarge) {
            try key.encryptedPEMRepresentation(
                passphrase: SecureBytes([UInt8](repeating: 0x61, count: 1025)), kdf: KeyStoreFixtures.cheapKDF)
        }
        let pem = try key.encryptedPEMRepresentation(passphrase: secret("pass"), kdf: KeyStoreFixtures.cheapKDF)
        expectError(.passphraseRequired) { try PrivateKey(encryptedPEM: pem, passphrase: secret("")) }
    }

    @Test(arguments: [
        KeyDerivation.scrypt(n: 512, r: 8, p: 1),  // below 2^10
        .scrypt(n: 3000, r: 8, p: 1),  // not a power of two
        .scrypt(n: 32768, r: 8, p: 1),  // 32 MiB + : OpenSSL 3.0 could not read the file
        .scrypt(n: 16384, r: 0, p: 1),
        .scrypt(n: 16384, r: 8, p: 0),
        .scrypt(n: 1 << 16, r: 1, p: 1),  // N must be below 2^(16·r)
        .scrypt(n: 1024, r: 8, p: 1024),  // work N·r·p above 2^22
        .scrypt(n: 1024, r: Int.max, p: Int.max),  // overflow
        .pbkdf2SHA256(iterations: 99_999),
        .pbkdf2SHA256(iterations: 5_000_001),
        .pbkdf2SHA256(iterations: -1),
    ])
    func keyDerivationOutsideTheLimitsIsRefused(kdf: KeyDerivation) throws {
        expectError(.invalidKeyDerivation) { try kdf.validate() }
        let key = try PrivateKey()
        expectError(.invalidKeyDerivation) { try key.encryptedPEMRepresentation(passphrase: secret("pass"), kdf: kdf) }
    }

    @Test(arguments: [
        KeyDerivation.default, .pbkdf2Default, .scrypt(n: 1024, r: 8, p: 1), .scrypt(n: 1 << 15, r: 2, p: 1),
        .scrypt(n: 16384, r: 8, p: 16),
        .pbkdf2SHA256(iterations: 100_000),
    ])
    func keyDerivationInsideTheLimitsIsAccepted(kdf: KeyDerivation) throws {
        try kdf.validate()
        #expect(kdf.memoryBytes <= KeyDerivation.maximumScryptMemoryBytes)
    }

    @Test func aFileAskingForTooMuchScryptMemoryIsRefusedBeforeDecrypting() throws {
        let pem = try PrivateKey().encryptedPEMRepresentation(passphrase: secret("pass"))
        // N = 16384, r = 8, p = 1 -> r = 127: 254 MiB, which OpenSSL would refuse as if the passphrase were wrong.
        let original = try #require(TestPEM.der(pem))
        let der = try #require(
            TestPEM.patched(
                original,
                [0x02, 0x02, 0x40, 0x00, 0x02, 0x01, 0x08, 0x02, 0x01, 0x01],
                [0x02, 0x02, 0x40, 0x00, 0x02, 0x01, 0x7F, 0x02, 0x01, 0x01]))
        let error = expectError(.inputTooLarge) {
            try PrivateKey(
                encryptedPEM: TestPEM.pem(label: "ENCRYPTED PRIVATE KEY", der: der), passphrase: secret("pass"))
        }
        #expect(error?.reason.contains("32 MiB") == true)
    }

    @Test func aFileAskingForMillionsOfPBKDF2IterationsIsRefusedBeforeDecrypting() throws {
        let pem = try PrivateKey().encryptedPEMRepresentation(
            passphrase: secret("pass"), kdf: .pbkdf2SHA256(iterations: 100_000))
        // 100,000 = 0x0186A0 -> 0x7FFFFF = 8,388,607 iterations.
        let original = try #require(TestPEM.der(pem))
        let der = try #require(
            TestPEM.patched(original, [0x02, 0x03, 0x01, 0x86, 0xA0], [0x02, 0x03, 0x7F, 0xFF, 0xFF]))
        let started = ContinuousClock.now
        expectError(.inputTooLarge) {
            try PrivateKey(
                encryptedPEM: TestPEM.pem(label: "ENCRYPTED PRIVATE KEY", der: der), passphrase: secret("pass"))
        }
        #expect(ContinuousClock.now - started < LooseTimeBounds.scaled(.seconds(1)))
    }

    /// The iteration limit follows the HMAC's cost: 3,000,000 iterations are within it for
    /// HMAC-SHA-256 and over it for HMAC-SHA-512 (each iteration about 2.4 times as slow).
    @Test func thePBKDF2LimitDependsOnTheHMAC() throws {
        let pem = try PrivateKey().encryptedPEMRepresentation(
            passphrase: secret("pass"), kdf: .pbkdf2SHA256(iterations: 100_000))
        // 100,000 = 0x0186A0 -> 0x2DC6C0 = 3,000,000 iterations.
        let original = try #require(TestPEM.der(pem))
        let sha256 = try #require(
            TestPEM.patched(original, [0x02, 0x03, 0x01, 0x86, 0xA0], [0x02, 0x03, 0x2D, 0xC6, 0xC0]))
        let header = try sha256.withUnsafeBytes { try PBES2Parameters(der: $0) }
        #expect(header.kdf == .pbkdf2(iterations: 3_000_000, prf: "SHA-256"))
        // hmacWithSHA256 (1.2.840.113549.2.9) -> hmacWithSHA512 (…2.11).
        let hmacSHA256: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x02, 0x09]
        let sha512 = try #require(TestPEM.patched(sha256, hmacSHA256, Array(hmacSHA256.dropLast()) + [0x0B]))
        let error = expectError(.inputTooLarge) { _ = try sha512.withUnsafeBytes { try PBES2Parameters(der: $0) } }
        #expect(error?.reason.contains("SHA-512") == true, "\(String(describing: error))")
        #expect(error?.reason.contains("2000000") == true, "\(String(describing: error))")
        #expect(error?.reason.contains("openssl pkcs8 -topk8") == true, "says how to re-encrypt the file")
    }

    /// A key length in the KDF's parameters that is not the cipher's: OpenSSL fails inside the
    /// decryption, which would read as a wrong passphrase; the header check calls it malformed.
    @Test(arguments: [KeyDerivation.pbkdf2SHA256(iterations: 100_000), .default])
    func aKeyLengthOtherThanTheCiphersIsMalformed(kdf: KeyDerivation) throws {
        let pem = try PrivateKey().encryptedPEMRepresentation(passphrase: secret("pass"), kdf: kdf)
        let der = try #require(TestPEM.der(pem))
        // What follows the salt: PBKDF2's 100,000 iterations, or scrypt's N = 16384, r = 8, p = 1.
        let afterSalt: [UInt8] =
            kdf == .default
            ? [0x02, 0x02, 0x40, 0x00, 0x02, 0x01, 0x08, 0x02, 0x01, 0x01] : [0x02, 0x03, 0x01, 0x86, 0xA0]
        let original = try der.withUnsafeBytes { try PBES2Parameters(der: $0) }
        let right = try #require(Self.withKeyLength(32, in: der, after: afterSalt))
        #expect(try right.withUnsafeBytes { try PBES2Parameters(der: $0) } == original)
        let wrong = try #require(Self.withKeyLength(16, in: der, after: afterSalt))
        let error = expectError(.malformedEncoding) { _ = try wrong.withUnsafeBytes { try PBES2Parameters(der: $0) } }
        #expect(
            error?.reason.contains("key length is 16 bytes; AES-256-CBC takes 32") == true,
            "\(String(describing: error))")
        expectError(.malformedEncoding) {
            try PrivateKey(
                encryptedPEM: TestPEM.pem(label: "ENCRYPTED PRIVATE KEY", der: wrong), passphrase: secret("pass"))
        }
    }

    /// `der` with a keyLength INTEGER after the KDF parameters `afterSalt`, made room for by
    /// taking 3 bytes off the 16-byte salt before them (the lengths around stay the same).
    static func withKeyLength(_ keyLength: UInt8, in der: [UInt8], after afterSalt: [UInt8]) -> [UInt8]? {
        guard let start = der.indices.first(where: { der[$0...].starts(with: afterSalt) }), start >= 18,
            der[start - 18] == 0x04, der[start - 17] == 0x10
        else { return nil }
        return Array(der[..<(start - 18)]) + [0x04, 0x0D] + der[(start - 16)..<(start - 3)] + afterSalt
            + [0x02, 0x01, keyLength] + der[(start + afterSalt.count)...]
    }

    @Test func headersOfOpenSSLGenpkeyFilesAreRead() throws {
        let header = try #require(TestPEM.der(KeyStoreFixtures.p384Encrypted)).withUnsafeBytes {
            try PBES2Parameters(der: $0)
        }
        #expect(header == PBES2Parameters(kdf: .pbkdf2(iterations: 2048, prf: "SHA-256"), cipher: "AES-256-CBC"))
    }

    @Test func errorsCarryNeitherThePassphraseNorTheKey() throws {
        let key = try PrivateKey()
        let passphrase = "hunter2-very-secret-passphrase"
        let pem = try key.encryptedPEMRepresentation(passphrase: secret(passphrase), kdf: KeyStoreFixtures.cheapKDF)
        let scalar = try key.rawRepresentation.withUnsafeBytes { Array($0) }
        let forbidden = [
            passphrase, "hunter2", Data(scalar).base64EncodedString(),
            scalar.map { String(format: "%02x", $0) }.joined(),
        ]
        var errors: [DeviceSigningError] = []
        for candidate in ["hunter2", passphrase + "x", ""] {
            do { _ = try PrivateKey(encryptedPEM: pem, passphrase: secret(candidate)) } catch let error
                as DeviceSigningError
            { errors.append(error) }
        }
        #expect(errors.count == 3)
        for error in errors {
            for text in forbidden {
                #expect(!error.description.contains(text))
                #expect(!String(reflecting: error).contains(text))
            }
        }
        #expect(!String(describing: key).contains(forbidden[2]))
    }
}

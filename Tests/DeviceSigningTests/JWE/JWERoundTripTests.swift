import FetchChannelTestSupport
import Foundation
import Testing

@testable import DeviceSigning

/// Encrypt then decrypt with fresh keys, for every `alg` × `enc` and the plaintext lengths where
/// padding and block boundaries change.
@Suite struct JWERoundTripTests {
    static let pairs: [(JWE.Algorithm, JWE.ContentEncryption)] = JWE.Algorithm.allCases.flatMap { alg in
        JWE.ContentEncryption.allCases.map { (alg, $0) }
    }

    /// Several threads parse and decrypt at once, one parsed JWE shared among them: the pooled
    /// `epk` keys and the recipient key's derive slots are each lent to one derive at a time (the
    /// thread sanitizer run of the tests checks it).
    @Test func decryptsOnSeveralThreadsAtOnce() async throws {
        let key = try P256.KeyAgreement.PrivateKey()
        let plaintext = Data("twenty operations".utf8)
        let compacts = try (0..<4).map { _ in try JWE.encrypt(plaintext, to: key.publicKey) }
        let shared = try CompactJWE(parsing: compacts[0])
        let results = await DedicatedThreads.run(4) { index in
            (0..<50).allSatisfy { round in
                (try? JWE.decrypt(compacts[(index + round) % 4], with: key)) == plaintext
                    && (try? shared.plaintext(with: key)) == plaintext
            }
        }
        #expect(results == [true, true, true, true])
    }

    @Test(arguments: pairs)
    func roundTripsAndRefusesAnotherKey(alg: JWE.Algorithm, enc: JWE.ContentEncryption) throws {
        let key = try P256.KeyAgreement.PrivateKey()
        for length in [0, 1, 15, 16, 17, 1000] {
            let plaintext = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let compact = try JWE.encrypt(plaintext, to: key.publicKey, algorithm: alg, encryption: enc)
            #expect(try JWE.decrypt(compact, with: key) == plaintext, "\(alg) \(enc) \(length) bytes")
            let parsed = try CompactJWE(parsing: compact)
            #expect(parsed.header.alg == alg && parsed.header.enc == enc)
            #expect(parsed.iv.count == enc.ivBytes && parsed.tag.count == enc.tagBytes)
            #expect(parsed.encryptedKey.count == (alg.keyWrapBytes == nil ? 0 : enc.keyBytes + 8))
        }
        let compact = try JWE.encrypt(Data("x".utf8), to: key.publicKey, algorithm: alg, encryption: enc)
        expectError(.decryptionFailed) { try JWE.decrypt(compact, with: P256.KeyAgreement.PrivateKey()) }
    }

    @Test func defaultsAreTheBackendsAndEveryEncryptionIsFresh() throws {
        let key = try P256.KeyAgreement.PrivateKey()
        let first = try JWE.encrypt(Data("same".utf8), to: key.publicKey)
        let second = try JWE.encrypt(Data("same".utf8), to: key.publicKey)
        let (a, b) = (try CompactJWE(parsing: first), try CompactJWE(parsing: second))
        #expect(a.header.alg == .ecdhES && a.header.enc == .a256GCM)
        #expect(try a.header.epk != b.header.epk, "a fresh ephemeral key per encryption")
        #expect(a.iv != b.iv, "a fresh IV per encryption")
        let wrapped = try JWE.encrypt(Data("same".utf8), to: key.publicKey, algorithm: .ecdhESA256KW)
        let again = try JWE.encrypt(Data("same".utf8), to: key.publicKey, algorithm: .ecdhESA256KW)
        #expect(try CompactJWE(parsing: wrapped).encryptedKey != CompactJWE(parsing: again).encryptedKey)
    }

    @Test func keyIdAndPartyInfoTravelInTheHeader() throws {
        let key = try P256.KeyAgreement.PrivateKey()
        let kid = "key \"1\" \\ é 🔑\n"
        let compact = try CompactJWE.encrypt(
            Data("hi".utf8), to: key.publicKey, algorithm: .ecdhESA128KW,
            encryption: .a128CBCHS256, keyId: kid, partyUInfo: Array("backend".utf8),
            partyVInfo: [0, 1, 2])
        let parsed = try CompactJWE(parsing: compact)
        #expect(parsed.header.kid == kid)
        #expect(parsed.header.apu == Array("backend".utf8) && parsed.header.apv == [0, 1, 2])
        #expect(try parsed.plaintext(with: key) == Data("hi".utf8))
        expectError(.inputTooLarge) {
            try CompactJWE.encrypt(Data(), to: key.publicKey, partyUInfo: [UInt8](repeating: 1, count: 513))
        }
        expectError(.inputTooLarge) {
            try CompactJWE.encrypt(Data(), to: key.publicKey, keyId: String(repeating: "k", count: 4096))
        }
    }

    /// The largest plaintext whose JWE still fits the 1 MiB limit decrypts; one more byte is refused
    /// by the encrypter, which never makes a JWE that no decrypter here would read.
    @Test func encryptionStopsAtTheLengthLimit() throws {
        let key = try P256.KeyAgreement.PrivateKey()
        let fixed = try JWE.encrypt(Data(), to: key.publicKey).utf8.count
        let largest = (CompactJWE.maximumLength - fixed) / 4 * 3
        let compact = try JWE.encrypt(Data(count: largest), to: key.publicKey)
        #expect(compact.utf8.count <= CompactJWE.maximumLength)
        #expect(try JWE.decrypt(compact, with: key).count == largest)
        expectError(.inputTooLarge) { try JWE.encrypt(Data(count: largest + 3), to: key.publicKey) }
    }

    @Test func keyAgreementKeysShowNoSecretAndConvert() throws {
        let key = try P256.KeyAgreement.PrivateKey()
        let d = try key.rawRepresentation.withUnsafeBytes { Base64.encode($0, alphabet: .url) }
        for text in [String(describing: key), String(reflecting: key), "\(key.publicKey)"] {
            #expect(!text.contains(d) && text.contains(key.publicKey.jwkThumbprint))
        }
        let pem = try key.pemRepresentation.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let jwk = try key.jwkRepresentation(includingPrivateKey: true).withUnsafeBytes { Array($0) }
        #expect(try P256.KeyAgreement.PrivateKey(pemRepresentation: pem).publicKey == key.publicKey)
        #expect(try P256.KeyAgreement.PrivateKey(pemRepresentation: key.pemRepresentation).publicKey == key.publicKey)
        #expect(try P256.KeyAgreement.PrivateKey(jwkRepresentation: jwk).publicKey == key.publicKey)
        #expect(try P256.KeyAgreement.PublicKey(jwk: key.publicKey.jwk) == key.publicKey)
        #expect(try P256.KeyAgreement.PublicKey(pemRepresentation: key.publicKey.pemRepresentation) == key.publicKey)
        let other = try P256.KeyAgreement.PrivateKey()
        let z1 = try key.sharedSecretFromKeyAgreement(with: other.publicKey)
        let z2 = try other.sharedSecretFromKeyAgreement(with: key.publicKey)
        #expect(z1.count == 32 && z1.constantTimeEquals(z2))
    }

    /// One key decrypts JWEs with ever new `epk`s through its kept ECDH slots: each derive uses the
    /// point of its own JWE, never the one a slot decoded before, and a failed one leaves nothing
    /// behind that a later derive would use.
    @Test func keptSlotsDeriveWithEachJWEsOwnEphemeralKey() throws {
        let key = try P256.KeyAgreement.PrivateKey()
        let texts = (0..<6).map { Data("answer \($0)".utf8) }
        let compacts = try texts.map { try JWE.encrypt($0, to: key.publicKey) }
        let stranger = try JWE.encrypt(Data("not for this key".utf8), to: P256.KeyAgreement.PrivateKey().publicKey)
        // Seeded: a run that fails fails again, in the same order.
        var random = SplitMix64(seed: 0x5EED_0004)
        for round in 0..<3 {
            for (text, compact) in zip(texts, compacts).shuffled(using: &random) {
                #expect(try JWE.decrypt(compact, with: key) == text, "round \(round)")
                expectError(.decryptionFailed) { try JWE.decrypt(stranger, with: key) }
            }
        }
        // The epk as a key, for callers that want it: the point the header holds.
        let header = try CompactJWE(parsing: compacts[0]).header
        #expect(try header.epk.x963Representation == Data(header.epkPoint))
    }

    /// The compact form as bytes (an HTTP body) decrypts like the string; a byte that is neither a
    /// dot nor base64url is refused by the parse.
    @Test func compactBytesDecryptLikeTheString() throws {
        let key = try P256.KeyAgreement.PrivateKey()
        let compact = try JWE.encrypt(Data("bytes".utf8), to: key.publicKey)
        #expect(try JWE.decrypt(compact: Data(compact.utf8), with: key) == Data("bytes".utf8))
        #expect(try JWE.decrypt(compact: Array(compact.utf8), with: key) == Data("bytes".utf8))
        var altered = Array(compact.utf8)
        altered[altered.count - 2] = 0xC3
        expectError(.malformedJWE) { try JWE.decrypt(compact: altered, with: key) }
    }
}

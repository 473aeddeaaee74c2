import FetchChannelTestSupport
import FetchChannelVectors
import Foundation
import Testing

@testable import DeviceSigning

/// Vectors/jwe-ecdh-es.json through `JWEVectors` (the checker `fetchchannel vectors verify` runs),
/// and the encrypting side: with the random values pinned, encryption reproduces every valid case
/// byte for byte, RFC 7520 §5.5 included.
@Suite struct JWEVectorTests {
    @Test func everyVectorGivesItsExpectedOutcome() throws {
        let report = JWEVectors.check(try TestSupport.vectorFile(JWEVectors.fileName))
        report.recordFailures()
        let file = try JWEFixtures.file()
        #expect(file.cases.count >= JWEVectors.minimumCases)
        #expect(report.casesChecked == file.cases.count + 1)
        #expect(file.cases.contains { $0.name == "rfc7520-5.5" && $0.encryptionInputs != nil })
    }

    @Test func everyAlgorithmPairHasAKnownAnswer() throws {
        let file = try JWEFixtures.file()
        for alg in JWE.Algorithm.allCases {
            for enc in JWE.ContentEncryption.allCases {
                let name = "\(alg.rawValue)-\(enc.rawValue)".lowercased()
                let vector = try JWEFixtures.vector(name, in: file)
                let header = try CompactJWE(parsing: vector.compact).header
                #expect(header.alg == alg && header.enc == enc, "\(name)")
            }
        }
    }

    @Test func pinnedEncryptionReproducesEveryKnownAnswer() throws {
        let file = try JWEFixtures.file()
        var reproduced = 0
        for vector in file.cases {
            guard let pinned = vector.encryptionInputs, let plaintext = vector.expected.plaintext else { continue }
            let recipient = try JWEFixtures.key(vector.key, in: file).publicKey
            let header = try CompactJWE(parsing: vector.compact).header
            let values = try CompactJWE.PinnedValues(
                ephemeralScalar: JWEFixtures.bytes(base64url: pinned.ephemeralD),
                contentKey: pinned.cek.map { try JWEFixtures.bytes(base64url: $0) },
                iv: JWEFixtures.bytes(base64url: pinned.iv))
            let compact = try CompactJWE.encrypt(
                Array(plaintext.utf8), to: recipient, algorithm: header.alg, encryption: header.enc,
                keyId: header.kid, partyUInfo: header.apu, partyVInfo: header.apv, pinned: values)
            #expect(compact == vector.compact, "case \(vector.id) \(vector.name): encryption differs")
            reproduced += 1
        }
        #expect(reproduced >= 26)
    }

    /// `vectors verify` checks a case's encryptionInputs too: one IV character changed (still
    /// base64url of the right size) makes the encryption differ, and the file fail.
    @Test func aWrongPinnedIVFailsTheFile() throws {
        let original = try TestSupport.vectorFile(JWEVectors.fileName)
        var root = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
        var cases = try #require(root["cases"] as? [[String: Any]])
        let index = try #require(cases.firstIndex { $0["encryptionInputs"] != nil })
        var inputs = try #require(cases[index]["encryptionInputs"] as? [String: Any])
        let iv = try #require(inputs["iv"] as? String)
        inputs["iv"] = (iv.first == "A" ? "B" : "A") + iv.dropFirst()
        cases[index]["encryptionInputs"] = inputs
        root["cases"] = cases
        let report = JWEVectors.check(try JSONSerialization.data(withJSONObject: root))
        #expect(report.failures.count == 1)
        #expect(report.failures.first?.contains("encrypting with encryptionInputs gives another JWE") == true)
    }

    /// RFC 7518 Appendix C lists OtherInfo field by field; the KDF input must be exactly that.
    @Test func otherInfoIsRFC7518AppendixC() throws {
        let info = ConcatKDF.otherInfo(
            algorithmID: "A128GCM", partyUInfo: Array("Alice".utf8),
            partyVInfo: Array("Bob".utf8), keyBytes: 16)
        let algorithmID: [UInt8] = [0, 0, 0, 7, 65, 49, 50, 56, 71, 67, 77]
        let partyUInfo: [UInt8] = [0, 0, 0, 5, 65, 108, 105, 99, 101]
        let partyVInfo: [UInt8] = [0, 0, 0, 3, 66, 111, 98]
        let suppPubInfo: [UInt8] = [0, 0, 0, 128]
        #expect(info == algorithmID + partyUInfo + partyVInfo + suppPubInfo)

        let file = try JWEFixtures.file()
        let appendix = file.rfc7518AppendixC
        let z = try JWEFixtures.key(appendix.recipientKey, in: file)
            .sharedSecretFromKeyAgreement(with: JWEFixtures.key(appendix.ephemeralKey, in: file).publicKey)
        let derived = try ConcatKDF.deriveKey(
            sharedSecret: z, algorithmID: "A128GCM", partyUInfo: Array("Alice".utf8),
            partyVInfo: Array("Bob".utf8), keyBytes: 16)
        let rfcKey: [UInt8] = [86, 170, 141, 234, 248, 35, 109, 32, 92, 34, 40, 205, 113, 167, 16, 26]
        #expect(derived.withUnsafeBytes { Array($0) } == rfcKey)
    }
}

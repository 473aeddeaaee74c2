import DeviceSigning
import Foundation
import Testing

/// Wycheproof ECDSA P-256 / SHA-256: every `valid` case verifies, every `invalid` one is rejected.
@Suite struct WycheproofTests {
    struct Suite: Decodable {
        let numberOfTests: Int
        let testGroups: [Group]
    }

    struct Group: Decodable {
        let publicKeyDer: String
        let sha: String
        let tests: [Case]
    }

    struct Case: Decodable {
        let tcId: Int
        let comment: String
        let msg: String
        let sig: String
        let result: String
    }

    enum Encoding { case der, p1363 }

    /// Runs one suite and returns (cases run, disagreements as "tcId: comment").
    func run(_ file: String, encoding: Encoding) throws -> (count: Int, failures: [String])? {
        guard let data = try TestSupport.wycheproofFile(file) else { return nil }
        let suite = try JSONDecoder().decode(Suite.self, from: data)
        var count = 0
        var failures: [String] = []
        for group in suite.testGroups {
            #expect(group.sha == "SHA-256")
            let key = try P256.Signing.PublicKey(derRepresentation: TestSupport.hex(group.publicKeyDer))
            for test in group.tests {
                count += 1
                let signatureBytes = TestSupport.hex(test.sig)
                let signature: P256.Signing.ECDSASignature?
                switch encoding {
                case .der: signature = try? P256.Signing.ECDSASignature(derRepresentation: signatureBytes)
                case .p1363: signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
                }
                let verified = signature.map { key.isValidSignature($0, for: TestSupport.hex(test.msg)) } ?? false
                let expected = test.result == "valid"
                if verified != expected {
                    failures.append("tcId \(test.tcId) (\(test.comment)): expected \(test.result), got \(verified ? "valid" : "invalid")")
                }
            }
        }
        #expect(count == suite.numberOfTests)
        return (count, failures)
    }

    @Test func derSuiteAgrees() throws {
        guard let outcome = try run("ecdsa_secp256r1_sha256_test.json", encoding: .der) else { return }
        #expect(outcome.count == 484)
        #expect(outcome.failures.isEmpty, "\(outcome.failures.joined(separator: "\n"))")
    }

    @Test func p1363SuiteAgrees() throws {
        guard let outcome = try run("ecdsa_secp256r1_sha256_p1363_test.json", encoding: .p1363) else { return }
        #expect(outcome.count == 262)
        #expect(outcome.failures.isEmpty, "\(outcome.failures.joined(separator: "\n"))")
    }
}

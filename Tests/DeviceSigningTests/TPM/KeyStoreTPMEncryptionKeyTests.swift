import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

@testable import DeviceSigning

/// A TPM-bound entry's encryption key is made in the same TPM: stored as its TSS2 blob, never
/// exportable, and it decrypts a JWE made to its public key.
@Suite(.dedicatedThread) struct KeyStoreTPMEncryptionKeyTests {
    struct Outcome: Sendable {
        var pemLabelLine = ""
        var isHardwareBound = false
        var decrypted: [UInt8] = []
        var exportCode: DeviceSigningError.Code?
        var hasJWK = false
    }

    @Test func tpmEntryGainsATPMEncryptionKeyThatDecrypts() async throws {
        guard SoftwareTPM.available(for: "TPM encryption key") else { return }
        let message = Array(#"{"operations":[]}"#.utf8)
        let outcome = try await onOwnThread { () throws -> Outcome in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let directory = tpm.directory.appendingPathComponent("keys")
            let store = try KeyStore(directory: directory)
            // A TPM without a resource manager holds few objects: the signing key is released here.
            let keyId = try {
                let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
                return try store.save(key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: nil)
            }()
            let record = try store.addEncryptionKey(keyId, passphrase: nil, tpm: tpm.configuration())
            var outcome = Outcome()
            outcome.hasJWK = record.encryptionJWK?.use == "enc"
            let text = try String(contentsOf: directory.appendingPathComponent(keyId + ".enc.pem"), encoding: .utf8)
            outcome.pemLabelLine = String(text.prefix { $0 != "\n" })
            let loaded = try #require(try store.loadEncryptionKey(keyId, passphrase: nil, tpm: tpm.configuration()))
            outcome.isHardwareBound = loaded.isHardwareBound
            outcome.exportCode = caughtCode { _ = try loaded.pemRepresentation }
            let jwe = try JWE.encrypt(message, to: loaded.publicKey)
            outcome.decrypted = Array(try JWE.decrypt(jwe, with: loaded))
            return outcome
        }
        #expect(outcome.hasJWK)
        #expect(outcome.pemLabelLine == "-----BEGIN TSS2 PRIVATE KEY-----")
        #expect(outcome.isHardwareBound)
        #expect(outcome.exportCode == .keyNotExportable)
        #expect(outcome.decrypted == message)
    }

    /// A TPM that stopped answering makes decryption fail with the TPM's error, not as a JWE
    /// that does not decrypt: the backend's answer is not to blame (the fetch client reports a
    /// `deviceProtectionError`).
    @Test func aStoppedTPMIsTheTPMsErrorNotAnUndecryptableJWE() async throws {
        guard SoftwareTPM.available(for: "TPM encryption key") else { return }
        let codes = try await onOwnThread { () throws -> [DeviceSigningError.Code?] in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.KeyAgreement.PrivateKey(generatingInTPM: tpm.configuration())
            let jwe = try JWE.encrypt(Array("{}".utf8), to: key.publicKey)
            _ = try JWE.decrypt(jwe, with: key)
            tpm.stop()
            let altered = String(jwe.dropLast(2)) + (jwe.hasSuffix("AA") ? "BA" : "AA")
            return [
                caughtCode { _ = try JWE.decrypt(jwe, with: key) },
                caughtCode { _ = try JWE.decrypt(altered, with: key) },
            ]
        }
        #expect(codes == [.tpmUnavailable, .tpmUnavailable])
    }

    /// The encryption key of a TPM-bound entry is made in the TPM that holds its signing key: a
    /// configuration that reaches another TPM is refused before anything is made or written.
    @Test func anotherTPMCannotGiveAnEntryItsEncryptionKey() async throws {
        guard SoftwareTPM.available(for: "TPM encryption key") else { return }
        let (refused, gainedAfterwards) = try await onOwnThread { () throws -> (Bool, Bool) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let other = try SoftwareTPM()
            defer { other.stop() }
            let store = try KeyStore(directory: tpm.directory.appendingPathComponent("keys"))
            let keyId = try {
                let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
                return try store.save(key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: nil)
            }()
            let refused = caughtCode { try store.addEncryptionKey(keyId, passphrase: nil, tpm: other.configuration()) }
            guard try store.metadata(keyId).encryptionJWK == nil else { return (false, false) }
            let record = try store.addEncryptionKey(keyId, passphrase: nil, tpm: tpm.configuration())
            return (refused != nil, record.encryptionJWK != nil)
        }
        #expect(refused, "a key of another TPM was made for the entry")
        #expect(gainedAfterwards)
    }
}

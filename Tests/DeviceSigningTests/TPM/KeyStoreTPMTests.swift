import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

@testable import DeviceSigning

/// A TPM-bound key in the key store: its TSS2 PEM stored like every key file, a record that says
/// it is TPM-bound, a load that gives a usable signing key, exports of the public key only.
@Suite(.dedicatedThread) struct KeyStoreTPMTests {
    struct RoundTrip: Sendable {
        var keyId = ""
        var modes: [String: Int] = [:]
        var pemLabelLine = ""
        var recordJSON = ""
        var metadata: KeyMetadata?
        var loadedThumbprint = ""
        var loadedIsHardwareBound = false
        var loadedSignatureValid = false
        var publicPEMFromRecord = ""
        var publicPEMOfKey = ""
        var privateExports: [DeviceSigningError.Code?] = []
        var exportReason = ""
    }

    @Test func tpmKeyRoundTripsThroughTheStore() async throws {
        guard SoftwareTPM.available(for: "TPM key store round trip") else { return }
        let trip = try await onOwnThread { () throws -> RoundTrip in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let directory = tpm.directory.appendingPathComponent("keys")
            let store = try KeyStore(directory: directory)
            var trip = RoundTrip()
            do {
                let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
                trip.publicPEMOfKey = key.publicKey.pemRepresentation
                trip.keyId = try store.save(key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: nil)
            }
            for suffix in [".pem", ".json"] {
                let path = directory.appendingPathComponent(trip.keyId + suffix).path
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                trip.modes[suffix] = (attributes[.posixPermissions] as? NSNumber)?.intValue
            }
            let pemFile = directory.appendingPathComponent(trip.keyId + ".pem")
            let pemText = try String(contentsOf: pemFile, encoding: .utf8)
            trip.pemLabelLine = String(pemText.prefix { $0 != "\n" })
            trip.recordJSON = try String(
                contentsOf: directory.appendingPathComponent(trip.keyId + ".json"),
                encoding: .utf8)
            let metadata = try store.metadata(trip.keyId)
            trip.metadata = metadata
            trip.publicPEMFromRecord = try metadata.publicKey().pemRepresentation

            let loaded = try store.load(trip.keyId, passphrase: nil, tpm: tpm.configuration())
            trip.loadedThumbprint = loaded.publicKey.jwkThumbprint
            trip.loadedIsHardwareBound = loaded.isHardwareBound
            let signature = try loaded.signature(for: Array("stored".utf8))
            trip.loadedSignatureValid = try metadata.publicKey().isValidSignature(signature, for: Array("stored".utf8))
            trip.privateExports = [
                caughtCode { _ = try loaded.pemRepresentation },
                caughtCode { _ = try loaded.derRepresentation },
                caughtCode { _ = try loaded.encryptedPEMRepresentation(passphrase: SecureBytes(Array("p".utf8))) },
            ]
            trip.exportReason = caughtReason { _ = try loaded.pemRepresentation }
            return trip
        }
        #expect(trip.modes == [".pem": 0o600, ".json": 0o600])
        #expect(trip.pemLabelLine == "-----BEGIN TSS2 PRIVATE KEY-----")
        #expect(trip.recordJSON.contains("\"protection\" : \"tpm2\""), "\(trip.recordJSON)")
        let metadata = try #require(trip.metadata)
        #expect(metadata.protection == .tpm2)
        #expect(metadata.isHardwareBound)
        #expect(metadata.kdf == "TPM 2.0 (not exportable)")
        #expect(metadata.keyId == trip.keyId)
        #expect(trip.loadedThumbprint == trip.keyId)
        #expect(trip.loadedIsHardwareBound)
        #expect(trip.loadedSignatureValid)
        #expect(trip.publicPEMFromRecord == trip.publicPEMOfKey, "the public key exports from the record")
        #expect(trip.privateExports == [.keyNotExportable, .keyNotExportable, .keyNotExportable])
        #expect(trip.exportReason.contains("never leaves"), "\(trip.exportReason)")
    }

    @Test func storedTPMKeyWhoseTPMIsGoneIsUnavailableNamingTheFileAndTCTI() async throws {
        guard SoftwareTPM.available(for: "TPM key store load without its TPM") else { return }
        let outcome = try await onOwnThread { () throws -> (String, String, DeviceSigningError?) in
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let store = try KeyStore(directory: tpm.directory.appendingPathComponent("keys"))
            let keyId: String
            do {
                let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
                keyId = try store.save(key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: nil)
            }
            tpm.stop()
            let error = caught { _ = try store.load(keyId, passphrase: nil, tpm: tpm.configuration()) }
            return (keyId, tpm.tcti, error)
        }
        let (keyId, tcti, error) = outcome
        let refusal = try #require(error)
        #expect(refusal.code == .tpmUnavailable)
        #expect(refusal.reason.contains(keyId + ".pem"), "\(refusal.reason)")
        #expect(refusal.reason.contains(tcti), "\(refusal.reason)")
    }

    @Test func softwareRecordsCarryNoProtectionAndReadAsSoftware() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ks-tpm-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try KeyStore(directory: directory)
        let key = try P256.Signing.PrivateKey()
        let keyId = try store.save(
            key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: nil,
            allowUnencrypted: true)
        let json = try String(contentsOf: directory.appendingPathComponent(keyId + ".json"), encoding: .utf8)
        #expect(!json.contains("protection"), "software records keep their old form")
        let metadata = try store.metadata(keyId)
        #expect(metadata.protection == nil)
        #expect(!metadata.isHardwareBound)
        #expect(!(try store.load(keyId, passphrase: nil)).isHardwareBound)
    }
}

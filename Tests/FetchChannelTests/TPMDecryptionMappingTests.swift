import DeviceSigning
import FetchChannelEmulator
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannel

/// An encrypted answer whose registration's encryption key is in a TPM that stopped: the
/// device's failure (`deviceProtectionError`), not the backend's (`invalidResponse`,
/// `undecryptable`), which would blame a backend that answered well.
@Suite(.dedicatedThread) struct TPMDecryptionMappingTests {
    @Test func anAnswerTheStoppedTPMCannotDecryptIsADeviceProtectionError() throws {
        guard SoftwareTPM.available(for: "the TPM decryption mapping") else { return }
        let server = "https://backend.example"
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        let key = try P256.KeyAgreement.PrivateKey(generatingInTPM: tpm.configuration())
        let body = try JWE.encrypt(Array(#"{"operations":[]}"#.utf8), to: key.publicKey)
        let answer = HTTPAnswer(
            status: 200, headers: [WireHeader.contentType: WireMediaType.jose], body: Data(body.utf8))
        let context = FetchErrorMapping.Context(server: server, estimatedOffsetMillis: nil, toleranceMillis: 60_000)
        let decrypted = FetchErrorMapping.evaluate(.answer(answer), context: context, decryptionKey: key).result
        #expect((try? decrypted.get())?.isEmpty == true, "the TPM decrypts while it runs: \(decrypted)")
        tpm.stop()
        let refused = FetchErrorMapping.evaluate(.answer(answer), context: context, decryptionKey: key).result
        guard case .failure(let error) = refused else {
            Issue.record("decrypted without its TPM: \(refused)")
            return
        }
        #expect(error.code == "deviceProtectionError", "\(error)")
        #expect(error.message.contains("tpmUnavailable"), "\(error.message)")
    }
}

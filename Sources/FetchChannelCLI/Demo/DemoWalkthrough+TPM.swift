import DeviceSigning
import FetchChannel
import FetchChannelEmulator
import Foundation

extension DemoWalkthrough {
    static let tpmDeviceId = "demo-tpm-device"

    /// A TPM-bound key fetching beside the software one, against a software TPM started for the
    /// step; said to be skipped when swtpm or OpenSSL's tpm2 provider is not installed.
    func showTPMBoundKey(
        step number: Int, store: KeyStore, beside software: FetchRegistration,
        backend: ReferenceBackend
    ) async throws {
        guard SoftwareTPM.missingPrerequisites == nil else {
            step(
                number,
                "Skipped the TPM-bound key: \(SoftwareTPM.missingPrerequisites ?? "")"
                    + " (apt-get install swtpm tpm2-openssl to see it).")
            return
        }
        let tpm = try SoftwareTPM()
        defer { tpm.stop() }
        let keyId: String
        do {
            let generated = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
            keyId = try store.save(
                generated,
                metadata: KeyMetadata(
                    publicKey: generated.publicKey,
                    deviceId: Self.tpmDeviceId), passphrase: nil)
        }
        let key = try store.load(keyId, passphrase: nil, tpm: tpm.configuration())
        let exportRefused = (try? key.pemRepresentation) == nil
        let target = try await Self.register(
            key, deviceId: Self.tpmDeviceId, at: backend.baseURL,
            trust: software.trust)
        let push = try backend.dispatch(
            deviceId: Self.tpmDeviceId,
            channel: DispatchChannel.pushNotification.wireValue)
        let registration = FetchRegistration(
            server: backend.baseURL, deviceId: Self.tpmDeviceId,
            dispatchTargetId: target, key: key, trust: software.trust)
        let result = await FetchClient(configuration: .init(requestTimeout: .seconds(5)))
            .pendingOutOfBandOperations([software, registration])
        let fetchedPush = result.operations.contains { $0.token == push.token }
        step(number, "A TPM-bound key in a software TPM (\(tpm.tcti)) fetched beside the software key:")
        say("   key \(keyId): \(KeyProtection.tpm2), private export refused: \(exportRefused ? "yes" : "no")")
        say(
            "   one fetch with both keys: \(result.operations.count) operations, \(result.errors.count) errors; "
                + "the TPM key's push \(Self.short(push.token)) among them: \(fetchedPush ? "yes" : "no")")
        guard exportRefused, result.errors.isEmpty, fetchedPush else {
            throw CLIFailure(
                .unexpectedOutcome, "the TPM step did not go as expected: \(result.errors.map(\.code)) errors")
        }
    }
}

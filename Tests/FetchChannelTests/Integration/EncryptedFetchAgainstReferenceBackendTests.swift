import DeviceSigning
import FetchChannel
import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

/// Encrypted operations answers end to end (docs/ARCHITECTURE.md, "Encrypted answers"): a
/// registration with an encryption key asks for `application/jose` and decrypts; one that cannot
/// decrypt its answer gets `invalidResponse` (undecryptable) while the other backends' operations
/// arrive.
@Suite(.dedicatedThread) struct EncryptedFetchAgainstReferenceBackendTests {
    let deviceId = "device-encrypted"

    /// A started backend with a dispatch target for this device, registered with `encryptionKey`.
    func backend(
        _ configuration: ReferenceBackend.Configuration = .init(),
        encryptionKey: P256.KeyAgreement.PrivateKey?
    ) throws -> (ReferenceBackend, FetchRegistration) {
        let key = try P256.Signing.PrivateKey()
        let backend = try ReferenceBackend.start(configuration)
        do {
            let target = try backend.registerDispatchTarget(
                deviceId: deviceId, signatureKey: key.publicKey,
                encryptionKey: encryptionKey?.publicKey)
            let registration = FetchRegistration(
                server: backend.baseURL, deviceId: deviceId, dispatchTargetId: target,
                key: key, encryptionKey: encryptionKey)
            return (backend, registration)
        } catch {
            // Not returned, so no caller would stop it.
            backend.stop()
            throw error
        }
    }

    @Test func decryptsEveryAlgorithmTheBackendIsConfiguredWith() async throws {
        for algorithm in JWE.Algorithm.allCases {
            for encryption in JWE.ContentEncryption.allCases {
                let configuration = ReferenceBackend.Configuration(jweAlgorithm: algorithm, jweEncryption: encryption)
                let decryption = try P256.KeyAgreement.PrivateKey()
                let (backend, registration) = try backend(configuration, encryptionKey: decryption)
                defer { backend.stop() }
                let operation = try backend.dispatch(deviceId: deviceId, channel: "link")
                let result = await FetchClient().pendingOutOfBandOperations([registration])
                let name = "\(algorithm.rawValue) \(encryption.rawValue)"
                #expect(result.errors.isEmpty, "\(name): \(result.errors)")
                #expect(result.operations.map(\.token) == [operation.token], "\(name)")
            }
        }
    }

    @Test func anUndecryptableAnswerIsThatBackendsErrorAndTheOthersArrive() async throws {
        let (faulty, faultyRegistration) = try backend(encryptionKey: try P256.KeyAgreement.PrivateKey())
        defer { faulty.stop() }
        try faulty.dispatch(deviceId: deviceId, channel: "link")
        try faulty.injectFault(EmulatorFault(endpoint: .operations, kind: .undecryptable))
        let (healthy, healthyRegistration) = try backend(encryptionKey: try P256.KeyAgreement.PrivateKey())
        defer { healthy.stop() }
        let operation = try healthy.dispatch(deviceId: deviceId, channel: "link")
        let (plain, plainRegistration) = try backend(encryptionKey: nil)
        defer { plain.stop() }
        let plainOperation = try plain.dispatch(deviceId: deviceId, channel: "png-qr-code")

        let result = await FetchClient().pendingOutOfBandOperations([
            faultyRegistration, healthyRegistration,
            plainRegistration,
        ])
        #expect(Set(result.operations.map(\.token)) == [operation.token, plainOperation.token])
        #expect(result.errors.map(\.code) == ["invalidResponse"])
        #expect(result.errors.map(\.server) == [faultyRegistration.serverName])
        let error = try #require(result.errors.first)
        #expect(error.invalidResponse?.kind == .undecryptable, "\(error)")
        #expect(error.message.contains("does not decrypt with this registration's encryption key"), "\(error)")
    }

    @Test func aJSONAnswerWhenJOSEWasAskedIsUndecryptable() async throws {
        let (backend, registration) = try backend(encryptionKey: try P256.KeyAgreement.PrivateKey())
        defer { backend.stop() }
        try backend.dispatch(deviceId: deviceId, channel: "link")
        try backend.injectFault(EmulatorFault(endpoint: .operations, kind: .garbage))
        let result = await FetchClient().pendingOutOfBandOperations([registration])
        #expect(result.operations.isEmpty)
        #expect(result.errors.map(\.invalidResponse?.kind) == [.undecryptable], "\(result.errors)")
    }

    @Test func aJOSEAnswerWhenJSONWasAskedIsUndecryptable() async throws {
        let (backend, registration) = try backend(encryptionKey: nil)
        defer { backend.stop() }
        try backend.injectFault(EmulatorFault(endpoint: .operations, kind: .undecryptable))
        let result = await FetchClient().pendingOutOfBandOperations([registration])
        #expect(result.errors.map(\.invalidResponse?.kind) == [.undecryptable], "\(result.errors)")
    }
}

import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelEmulator

/// A rotation keeps the dispatch target's encryption key: the PATCH may name it, unchanged only.
@Suite(.dedicatedThread) struct ReferenceBackendRotationEncryptionKeyTests {
    private static func jwkObject(_ jwk: JWK) throws -> [String: String] {
        try #require(try JSONSerialization.jsonObject(with: Data(jwk.jsonString.utf8)) as? [String: String])
    }

    @Test func patchNamingAnotherEncryptionKeyIsRefusedAndTheRegisteredOneIsAccepted() async throws {
        let clock = ManualWallClock(millis: 1_700_000_000_000)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let signing = try P256.Signing.PrivateKey()
        let encryption = try P256.KeyAgreement.PrivateKey()
        let id = try backend.registerDispatchTarget(
            deviceId: "phone", signatureKey: signing.publicKey,
            encryptionKey: encryption.publicKey)
        let signer = try DeviceSignatureSigner(key: signing, dispatchTargetId: id, clock: clock)
        let url = backend.baseURL.appendingPathComponent("nevisfido/token/dispatch/targets/\(id)")
        let newKey = try P256.Signing.PrivateKey()
        func patch(encryptionJWK: JWK) async throws -> BackendClient.Answer {
            let body: [String: Any] = [
                "signatureKey": try Self.jwkObject(newKey.publicKey.jwk),
                "encryptionKey": try Self.jwkObject(encryptionJWK.withUse("enc")),
            ]
            return try await BackendClient.send(
                "PATCH", url, json: body,
                headers: [DeviceSignatureSigner.headerName: try signer.headerValue()])
        }

        let changed = try await patch(encryptionJWK: try P256.KeyAgreement.PrivateKey().publicKey.jwk)
        #expect(changed.status == 400, "\(changed.json)")
        #expect(changed.json["errorCode"] as? String == "MALFORMED_REQUEST")
        let kept = try await patch(encryptionJWK: encryption.publicKey.jwk)
        #expect(kept.status == 200 && kept.json["id"] as? String == id, "\(kept.json)")
    }
}

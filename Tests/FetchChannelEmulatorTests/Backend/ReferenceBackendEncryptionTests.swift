import DeviceSigning
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelEmulator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Encrypted operations answers (docs/ARCHITECTURE.md, "Encrypted answers"): a dispatch target
/// registered with an `encryptionKey` gets its operations as a JWE when it asks for
/// `application/jose`, plain JSON when it asks for JSON, and 406 for anything else.
@Suite(.dedicatedThread) struct ReferenceBackendEncryptionTests {
    let start: Int64 = 1_700_000_000_000

    /// A device registered over HTTP with a signature key and (optionally) an encryption key.
    private struct EncryptingDevice {
        let device: TestDevice
        let encryptionKey: P256.KeyAgreement.PrivateKey
    }

    private static func jwkObject(_ jwk: JWK, use: String? = nil) throws -> [String: String] {
        let parsed = try JSONSerialization.jsonObject(with: Data(jwk.jsonString.utf8))
        var object = try #require(parsed as? [String: String])
        object["use"] = use
        return object
    }

    private func register(
        _ backend: ReferenceBackend, clock: any WallClock,
        encryptionJWK: (P256.Signing.PrivateKey, P256.KeyAgreement.PrivateKey) throws
            -> [String: String]?
    ) async throws -> (BackendClient.Answer, EncryptingDevice?) {
        let key = try P256.Signing.PrivateKey()
        let encryptionKey = try P256.KeyAgreement.PrivateKey()
        let deviceId = "device-\(UUID().uuidString.prefix(8))"
        var body: [String: Any] = ["deviceId": deviceId, "signatureKey": try Self.jwkObject(key.publicKey.jwk)]
        body["encryptionKey"] = try encryptionJWK(key, encryptionKey)
        let url = backend.baseURL.appendingPathComponent("nevisfido/token/dispatch/targets")
        let answer = try await BackendClient.send("POST", url, json: body)
        guard let id = answer.json["id"] as? String else { return (answer, nil) }
        let signer = try DeviceSignatureSigner(key: key, dispatchTargetId: id, clock: clock)
        let device = TestDevice(deviceId: deviceId, key: key, dispatchTargetId: id, signer: signer)
        return (answer, EncryptingDevice(device: device, encryptionKey: encryptionKey))
    }

    /// A device registered over HTTP with an encryption key (`"use":"enc"`).
    private func registerEncrypting(_ backend: ReferenceBackend, clock: any WallClock) async throws -> EncryptingDevice
    {
        let (_, made) = try await register(backend, clock: clock) { _, encryption in
            try Self.jwkObject(encryption.publicKey.jwk, use: "enc")
        }
        return try #require(made)
    }

    private func fetch(
        _ backend: ReferenceBackend, _ device: TestDevice,
        accept: String?
    ) async throws -> BackendClient.Answer {
        var headers = [DeviceSignatureSigner.headerName: try device.signer.headerValue()]
        headers["Accept"] = accept
        let url = backend.baseURL.appendingPathComponent("nevisfido/devices/outofbandoperations/\(device.deviceId)")
        return try await BackendClient.send("GET", url, headers: headers)
    }

    /// Device "phone" registered through the in-process control, with an encryption key.
    private static func registered(
        _ backend: ReferenceBackend,
        clock: any WallClock
    ) throws -> (TestDevice, P256.KeyAgreement.PrivateKey) {
        let signing = try P256.Signing.PrivateKey()
        let decryption = try P256.KeyAgreement.PrivateKey()
        let id = try backend.registerDispatchTarget(
            deviceId: "phone", signatureKey: signing.publicKey,
            encryptionKey: decryption.publicKey)
        let signer = try DeviceSignatureSigner(key: signing, dispatchTargetId: id, clock: clock)
        return (TestDevice(deviceId: "phone", key: signing, dispatchTargetId: id, signer: signer), decryption)
    }

    private static func tokens(in plaintext: Data) -> [String] {
        let answer = BackendClient.Answer(status: 200, headers: [:], body: plaintext)
        return answer.tokens
    }

    @Test func theOperationsAnswerIsEncryptedToTheTargetsEncryptionKeyWhenJOSEIsAsked() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let (registered, made) = try await register(backend, clock: clock) { _, encryption in
            try Self.jwkObject(encryption.publicKey.jwk, use: "enc")
        }
        #expect(registered.status == 201)
        let device = try #require(made)
        let operation = try backend.dispatch(deviceId: device.device.deviceId, channel: "link")

        let jose = try await fetch(backend, device.device, accept: "application/jose;charset=UTF-8")
        #expect(jose.status == 200)
        #expect(jose.header("Content-Type") == "application/jose;charset=UTF-8")
        let compact = String(decoding: jose.body, as: UTF8.self)
        let parsed = try CompactJWE(parsing: compact)
        #expect(parsed.header.alg == .ecdhES)
        #expect(parsed.header.enc == .a256GCM)
        #expect(Self.tokens(in: try JWE.decrypt(compact, with: device.encryptionKey)) == [operation.token])

        for accept in ["application/json", "*/*", "application/jose;q=0, application/json"] {
            let json = try await fetch(backend, device.device, accept: accept)
            #expect(json.status == 200, "\(accept)")
            #expect(json.header("Content-Type") == "application/json", "\(accept)")
            #expect(json.tokens == [operation.token], "\(accept)")
        }
        let refused = try await fetch(backend, device.device, accept: "text/html")
        #expect(refused.status == 406)
        #expect(refused.errorCode == "NOT_ACCEPTABLE")
        #expect(refused.header("Content-Type") == "application/json")
    }

    @Test func aTargetWithoutAnEncryptionKeyGetsJSONOr406() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)
        let operation = try backend.dispatch(deviceId: device.deviceId, channel: "link")
        let jose = try await fetch(backend, device, accept: "application/jose;charset=UTF-8")
        #expect(jose.status == 406)
        #expect(jose.errorCode == "NOT_ACCEPTABLE")
        let either = try await fetch(backend, device, accept: "application/jose, application/json;q=0.5")
        #expect(either.status == 200)
        #expect(either.tokens == [operation.token])
    }

    @Test func anEncryptionKeyMustBeAP256PointOtherThanTheSignatureKey() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let same = try await register(backend, clock: clock) { signing, _ in
            try Self.jwkObject(signing.publicKey.jwk, use: "enc")
        }
        #expect(same.0.status == 400)
        #expect(same.0.errorCode == "MALFORMED_REQUEST")
        let offCurve = try await register(backend, clock: clock) { _, encryption in
            var jwk = try Self.jwkObject(encryption.publicKey.jwk)
            jwk["y"] = jwk["x"]
            return jwk
        }
        #expect(offCurve.0.status == 400)
        let p384 = try await register(backend, clock: clock) { _, encryption in
            var jwk = try Self.jwkObject(encryption.publicKey.jwk)
            jwk["crv"] = "P-384"
            return jwk
        }
        #expect(p384.0.status == 400)
    }

    @Test func rotatingTheSignatureKeyKeepsTheEncryptionKey() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try await registerEncrypting(backend, clock: clock)
        let newKey = try P256.Signing.PrivateKey()
        let url = BackendClient.dispatchTargetURL(backend, device.device.dispatchTargetId)
        let rotated = try await BackendClient.send(
            "PATCH", url, json: ["signatureKey": try Self.jwkObject(newKey.publicKey.jwk)],
            headers: [DeviceSignatureSigner.headerName: try device.device.signer.headerValue()])
        #expect(rotated.status == 200)
        let targetId = device.device.dispatchTargetId
        let signer = try DeviceSignatureSigner(key: newKey, dispatchTargetId: targetId, clock: clock)
        let renewed = TestDevice(
            deviceId: device.device.deviceId, key: newKey,
            dispatchTargetId: device.device.dispatchTargetId, signer: signer)
        let operation = try backend.dispatch(deviceId: renewed.deviceId, channel: "link")
        let jose = try await fetch(backend, renewed, accept: "application/jose;charset=UTF-8")
        #expect(jose.status == 200)
        let plaintext = try JWE.decrypt(String(decoding: jose.body, as: UTF8.self), with: device.encryptionKey)
        #expect(Self.tokens(in: plaintext) == [operation.token])
    }

    /// The two keys of a target are never one: a rotation may not make its encryption key the
    /// signature key, named or not.
    @Test func aRotationCannotMakeTheEncryptionKeyTheSignatureKey() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try await registerEncrypting(backend, clock: clock)
        let url = BackendClient.dispatchTargetURL(backend, device.device.dispatchTargetId)
        let encryptionAsSigning = try Self.jwkObject(
            P256.Signing.PublicKey(x963Representation: device.encryptionKey.publicKey.x963Representation).jwk)
        let refused = try await BackendClient.send(
            "PATCH", url, json: ["signatureKey": encryptionAsSigning],
            headers: [DeviceSignatureSigner.headerName: try device.device.signer.headerValue()])
        #expect(refused.status == 400 && refused.errorCode == "MALFORMED_REQUEST", "\(refused.status)")
        #expect(try await fetch(backend, device.device, accept: "application/json").status == 200, "the key is kept")
    }

    /// A target registered without an encryption key takes the one its rotation names; once it
    /// has one, a rotation may name only that one.
    @Test func aRotationGivesAnEncryptionKeyOnlyToATargetWithoutOne() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)
        let url = backend.baseURL.appendingPathComponent("nevisfido/token/dispatch/targets")
            .appendingPathComponent(device.dispatchTargetId)
        let signed = { [DeviceSignatureSigner.headerName: try device.signer.headerValue()] }
        let rotation = { (encryptionJWK: [String: String]) in
            ["signatureKey": try Self.jwkObject(device.key.publicKey.jwk), "encryptionKey": encryptionJWK]
        }
        let itsOwnSignatureKey = try await BackendClient.send(
            "PATCH", url, json: try rotation(try Self.jwkObject(device.key.publicKey.jwk, use: "enc")),
            headers: try signed())
        #expect(itsOwnSignatureKey.status == 400)

        let decryption = try P256.KeyAgreement.PrivateKey()
        let gained = try await BackendClient.send(
            "PATCH", url, json: try rotation(try Self.jwkObject(decryption.publicKey.jwk, use: "enc")),
            headers: try signed())
        #expect(gained.status == 200)
        let operation = try backend.dispatch(deviceId: device.deviceId, channel: "link")
        let jose = try await fetch(backend, device, accept: "application/jose;charset=UTF-8")
        #expect(jose.status == 200)
        let plaintext = try JWE.decrypt(String(decoding: jose.body, as: UTF8.self), with: decryption)
        #expect(Self.tokens(in: plaintext) == [operation.token])

        let other = try P256.KeyAgreement.PrivateKey()
        let changed = try await BackendClient.send(
            "PATCH", url, json: try rotation(try Self.jwkObject(other.publicKey.jwk, use: "enc")),
            headers: try signed())
        #expect(changed.status == 400)
        #expect(changed.errorCode == "MALFORMED_REQUEST")
        let kept = try await fetch(backend, device, accept: "application/jose;charset=UTF-8")
        let keptPlaintext = try JWE.decrypt(String(decoding: kept.body, as: UTF8.self), with: decryption)
        #expect(Self.tokens(in: keptPlaintext) == [operation.token])
    }

    @Test(arguments: JWE.Algorithm.allCases)
    func everyConfiguredAlgorithmDecrypts(_ algorithm: JWE.Algorithm) async throws {
        for encryption in JWE.ContentEncryption.allCases {
            let clock = ManualWallClock(millis: start)
            let configuration = ReferenceBackend.Configuration(
                clock: clock, jweAlgorithm: algorithm,
                jweEncryption: encryption)
            let backend = try ReferenceBackend.start(configuration)
            defer { backend.stop() }
            let (device, decryption) = try Self.registered(backend, clock: clock)
            let operation = try backend.dispatch(deviceId: "phone", channel: "link")
            let answer = try await fetch(backend, device, accept: "application/jose")
            let compact = String(decoding: answer.body, as: UTF8.self)
            let header = try CompactJWE(parsing: compact).header
            #expect(header.alg == algorithm)
            #expect(header.enc == encryption)
            #expect(Self.tokens(in: try JWE.decrypt(compact, with: decryption)) == [operation.token])
        }
    }

    @Test func theUndecryptableFaultSendsAJWEForAnotherKey() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let (device, decryption) = try Self.registered(backend, clock: clock)
        try backend.dispatch(deviceId: "phone", channel: "link")
        try backend.injectFault(EmulatorFault(endpoint: .operations, kind: .undecryptable, count: 1))
        let answer = try await fetch(backend, device, accept: "application/jose;charset=UTF-8")
        #expect(answer.status == 200)
        #expect(answer.header("Content-Type") == "application/jose;charset=UTF-8")
        let compact = String(decoding: answer.body, as: UTF8.self)
        _ = try CompactJWE(parsing: compact)
        #expect(throws: DeviceSigningError(.decryptionFailed, "")) { try JWE.decrypt(compact, with: decryption) }
        let next = try await fetch(backend, device, accept: "application/jose;charset=UTF-8")
        let plaintext = try JWE.decrypt(String(decoding: next.body, as: UTF8.self), with: decryption)
        #expect(Self.tokens(in: plaintext).count == 1)
    }

    @Test func acceptNegotiation() {
        typealias Format = OperationsAnswerFormat
        #expect(Format.negotiate(accept: [], targetHasEncryptionKey: true) == .json)
        #expect(Format.negotiate(accept: ["application/jose;charset=UTF-8"], targetHasEncryptionKey: true) == .jose)
        #expect(Format.negotiate(accept: ["APPLICATION/JOSE"], targetHasEncryptionKey: true) == .jose)
        #expect(Format.negotiate(accept: ["application/jose"], targetHasEncryptionKey: false) == nil)
        #expect(Format.negotiate(accept: ["text/html", "application/json"], targetHasEncryptionKey: true) == .json)
        #expect(Format.negotiate(accept: ["application/jose; q=0", "*/*"], targetHasEncryptionKey: true) == .json)
        #expect(Format.negotiate(accept: ["application/json;q=0.0"], targetHasEncryptionKey: true) == nil)
        #expect(Format.negotiate(accept: ["text/html"], targetHasEncryptionKey: true) == nil)
    }
}

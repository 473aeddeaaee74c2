import DeviceSigning
import FetchChannel
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelEmulator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One device's operations answer stays within what the client reads (1 MiB), as JSON and as a
/// JWE: a dispatch that would pass it is refused like the count bound is. Before, 1,000 pending
/// operations of 4 KiB of data each made a 4.3 MiB answer, and every later fetch of the device
/// failed as oversized (or as 500 `ENCRYPTION_FAILED` for `application/jose`).
@Suite(.dedicatedThread) struct ReferenceBackendAnswerSizeTests {
    let start: Int64 = 1_700_000_000_000

    static func fetch(_ backend: ReferenceBackend, _ device: TestDevice, accept: String) async throws
        -> BackendClient.Answer
    {
        let url = backend.baseURL.appendingPathComponent("nevisfido/devices/outofbandoperations/\(device.deviceId)")
        return try await BackendClient.send(
            "GET", url, headers: [DeviceSignatureSigner.headerName: try device.signer.headerValue(), "Accept": accept])
    }

    @Test func aDispatchThatWouldMakeTheAnswerLargerThanTheClientReadsIsRefused() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let signing = try P256.Signing.PrivateKey()
        let decryption = try P256.KeyAgreement.PrivateKey()
        let id = try backend.registerDispatchTarget(
            deviceId: "phone", signatureKey: signing.publicKey, encryptionKey: decryption.publicKey)
        let signer = try DeviceSignatureSigner(key: signing, dispatchTargetId: id, clock: clock)
        let device = TestDevice(deviceId: "phone", key: signing, dispatchTargetId: id, signer: signer)
        let body: [String: Any] = [
            "deviceId": "phone", "channel": "link", "lifetimeSeconds": 600,
            "data": String(repeating: "x", count: 4_000),
        ]

        var accepted: [BackendClient.Answer] = []
        var refusal: BackendClient.Answer?
        for _ in 0..<400 {
            let answer = try await BackendClient.dispatch(backend, body)
            guard answer.status == 201 else {
                refusal = answer
                break
            }
            accepted.append(answer)
        }
        let refused = try #require(refusal, "400 dispatches of 4 KiB were all taken")
        #expect(refused.status == 507)
        #expect(refused.errorCode == WireErrorCode.tooManyOperations.rawValue)
        let message = try #require(refused.json["message"] as? String)
        #expect(message.hasPrefix("Device phone's operations answer would be larger than 785648 bytes"), "\(message)")
        #expect(accepted.count > 150, "far fewer than the 1,000 the count bound allows")

        let json = try await Self.fetch(backend, device, accept: WireMediaType.json)
        #expect(json.status == 200)
        #expect(json.body.count <= OperationsAnswerSize.maximumJSONBytes)
        #expect(json.body.count > OperationsAnswerSize.maximumJSONBytes - 4_500, "one more would not fit")
        let server = backend.baseURL.absoluteString
        #expect(try PendingOperationsDecoder.decode(json.body, server: server).count == accepted.count)

        let jose = try await Self.fetch(backend, device, accept: WireMediaType.joseUTF8)
        #expect(jose.status == 200)
        #expect(jose.body.count <= HTTPAnswer.maximumBodyBytes)
        let plaintext = try JWE.decrypt(compact: jose.body, with: decryption)
        #expect(try PendingOperationsDecoder.decode(plaintext, server: server).count == accepted.count)

        // Another device is served; a redeemed operation and an expired one free their bytes.
        #expect(try await BackendClient.dispatch(backend, ["deviceId": "tablet", "channel": "link"]).status == 201)
        let first = try #require(accepted.first?.json["payload"] as? [String: Any])
        let redeemData = try #require(first["redeemData"] as? [String: Any])
        let token = try #require(redeemData["token"] as? String)
        let redeemURL = try #require(redeemData["redeemUrl"] as? String)
        #expect(try await BackendClient.redeem(redeemURL, token: token).status == 200)
        #expect(try await BackendClient.dispatch(backend, body).status == 201)
        #expect(try await BackendClient.dispatch(backend, body).status == 507)
        clock.advance(byMillis: 601_000)  // past every expiry: one dispatch a millisecond after the other
        #expect(try await BackendClient.dispatch(backend, body).status == 201)
    }

    /// The bound's arithmetic: the JWE of an answer of ``OperationsAnswerSize/maximumJSONBytes``
    /// fits what the client reads with every algorithm the backend can be configured with, and
    /// the client's limit is the one the emulator names.
    @Test func theLargestAnswerFitsTheClientEncryptedWithEveryAlgorithm() throws {
        #expect(OperationsAnswerSize.clientMaximumBytes == HTTPAnswer.maximumBodyBytes)
        #expect(OperationsAnswerSize.clientMaximumBytes == CompactJWE.maximumLength)
        let recipient = try P256.KeyAgreement.PrivateKey()
        let plaintext = [UInt8](repeating: UInt8(ascii: " "), count: OperationsAnswerSize.maximumJSONBytes)
        for algorithm in JWE.Algorithm.allCases {
            for encryption in JWE.ContentEncryption.allCases {
                let jwe = try JWE.encrypt(
                    plaintext, to: recipient.publicKey, algorithm: algorithm, encryption: encryption)
                #expect(jwe.utf8.count <= HTTPAnswer.maximumBodyBytes, "\(algorithm) \(encryption)")
                #expect(jwe.utf8.count > HTTPAnswer.maximumBodyBytes - 1_024, "\(algorithm) \(encryption)")
            }
        }
    }

    /// An answer's size is its frame and its operations' shares, which is what a device's total
    /// adds up.
    @Test func anAnswersSizeIsItsFrameAndItsOperationsShares() throws {
        let operations = try (0..<3).map { index in
            try #require(
                StoredOperation(
                    deviceId: "phone", kind: .authentication, creationTimeMillis: start + Int64(index),
                    expiresAtMillis: start + 60_000, channel: "link", token: "token-\(index)",
                    redeemURL: "https://backend.example/redeem", data: nil))
        }
        for count in 1...3 {
            let chosen = Array(operations.prefix(count))
            #expect(
                StoredOperation.answer(chosen).count
                    == OperationsAnswerSize.frameBytes + chosen.reduce(0) { $0 + $1.answerShare })
        }
    }
}

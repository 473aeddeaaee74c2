import DeviceSigning
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelEmulator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Registration over HTTP: a device's first dispatch target is open (trust on first use); a
/// further one needs a Device-Signature of one of that device's dispatch targets.
@Suite(.dedicatedThread) struct ReferenceBackendRegistrationTests {
    let start: Int64 = 1_700_000_000_000

    private func register(
        _ backend: ReferenceBackend, deviceId: String, key: P256.Signing.PublicKey,
        signedBy signer: DeviceSignatureSigner? = nil,
        signature: String? = nil, extra: [String: Any] = [:]
    ) async throws -> BackendClient.Answer {
        let jwkObject = try JSONSerialization.jsonObject(with: Data(key.jwk.jsonString.utf8))
        let jwk = try #require(jwkObject as? [String: String])
        let value = try signature ?? signer?.headerValue()
        let headers = value.map { [DeviceSignatureSigner.headerName: $0] } ?? [:]
        let url = backend.baseURL.appendingPathComponent("nevisfido/token/dispatch/targets")
        let body = (["deviceId": deviceId, "signatureKey": jwk] as [String: Any]).merging(extra) { $1 }
        return try await BackendClient.send("POST", url, json: body, headers: headers)
    }

    /// `POST <targets>/` names no route: 404, as an empty last segment is for the other routes.
    /// Before, the empty segment read as the collection itself, and the POST registered a target.
    @Test func aTrailingSlashAfterTheCollectionIsNotFound() async throws {
        let backend = try ReferenceBackend.start()
        defer { backend.stop() }
        let key = try P256.Signing.PrivateKey().publicKey
        let body = #"{"deviceId":"slash","signatureKey":\#(key.jwk.jsonString)}"#
        let collection = WirePaths.basePath + WirePaths.dispatchTargets
        let json = "Content-Type: application/json\r\n"
        for method in ["POST", "PATCH"] {
            let head =
                "\(method) \(collection)/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\(json)\r\n"
            #expect(try await BackendClient.raw(backend, head + body).status == 404, "\(method)")
        }
        #expect(backend.dispatchTargetIds(ofDevice: "slash").isEmpty)
        #expect(backend.statistics.requests.isEmpty)
        #expect(try await BackendClient.rawPost(backend, collection, body: body, headers: json).status == 201)
    }

    /// Whatever a registration names is kept for as long as the target: username, name, target
    /// and dispatcher are strings of at most 256 bytes (null or absent: empty), as deviceId is.
    /// Before, any length was kept, and unsigned first registrations could fill the memory.
    @Test(arguments: ["username", "name", "target", "dispatcher"])
    func theDescriptiveMembersAreBounded(member: String) async throws {
        let backend = try ReferenceBackend.start(.init(clock: ManualWallClock(millis: start)))
        defer { backend.stop() }
        let key = try P256.Signing.PrivateKey().publicKey
        for (index, value) in [String(repeating: "a", count: 257), "1"].enumerated() {
            let body: [String: Any] = [member: index == 0 ? value : 1]
            let refused = try await register(backend, deviceId: "d-\(member)-\(index)", key: key, extra: body)
            #expect(refused.status == 400, "\(member): \(refused.status)")
            #expect(
                (refused.json["message"] as? String)?.contains("\(member) must be a string of at most 256 bytes")
                    == true,
                "\(refused.json)")
        }
        let acceptedValues: [Any] = [String(repeating: "é", count: 128), NSNull()]
        for (index, value) in acceptedValues.enumerated() {
            let accepted = try await register(
                backend, deviceId: "ok-\(member)-\(index)", key: key, extra: [member: value])
            #expect(accepted.status == 201, "\(member): \(accepted.status)")
        }
    }

    /// A body that names a member twice is refused, at any depth: which `deviceId` or which
    /// `signatureKey` counts would otherwise be a parser's choice.
    @Test func aBodyWithAMemberTwiceIsMalformed() async throws {
        let backend = try ReferenceBackend.start(.init(clock: ManualWallClock(millis: start)))
        defer { backend.stop() }
        let jwk = try P256.Signing.PrivateKey().publicKey.jwk.jsonString
        let url = "/nevisfido/token/dispatch/targets"
        for body in [
            #"{"deviceId":"x1","deviceId":"x2","signatureKey":\#(jwk)}"#,
            #"{"deviceId":"x1","signatureKey":\#(jwk),"signatureKey":\#(jwk)}"#,
            #"{"deviceId":"x1","signatureKey":\#(jwk.dropLast()),"x":"1","x":"2"}}"#,
        ] {
            let answer = try await BackendClient.rawPost(
                backend, url, body: body, headers: "Content-Type: application/json\r\n")
            #expect(answer.status == 400, "\(body)")
        }
        #expect(backend.dispatchTargetIds(ofDevice: "x1").isEmpty && backend.dispatchTargetIds(ofDevice: "x2").isEmpty)
    }

    /// A signature key sent with its private `d` is refused, not stored: the client must hear
    /// that it sent its private key.
    @Test func aPrivateJWKIsRefused() async throws {
        let backend = try ReferenceBackend.start(.init(clock: ManualWallClock(millis: start)))
        defer { backend.stop() }
        let key = try P256.Signing.PrivateKey()
        let privateJWK = try key.jwkRepresentation(includingPrivateKey: true)
        let jwk = try #require(
            try JSONSerialization.jsonObject(with: privateJWK.withUnsafeBytes { Data($0) }) as? [String: String])
        #expect(jwk["d"] != nil)
        let url = backend.baseURL.appendingPathComponent("nevisfido/token/dispatch/targets")
        let answer = try await BackendClient.send("POST", url, json: ["deviceId": "p1", "signatureKey": jwk])
        #expect(answer.status == 400, "\(answer.json)")
        #expect((answer.json["message"] as? String)?.contains("holds a private key") == true, "\(answer.json)")
        #expect(backend.dispatchTargetIds(ofDevice: "p1").isEmpty)
        // A public JWK too large to read is not called private: the alarm is for a d only.
        var large: [String: Any] = jwk
        large["d"] = nil
        large["x5c"] = [String(repeating: "A", count: 9_000)]
        let tooLarge = try await BackendClient.send("POST", url, json: ["deviceId": "p2", "signatureKey": large])
        #expect(tooLarge.status == 400, "\(tooLarge.json)")
        let message = tooLarge.json["message"] as? String ?? ""
        #expect(message.contains("not a usable P-256 JWK") && !message.contains("private"), "\(message)")
    }

    /// Rotations signed with one old key, sent at once: one of them replaces the key, the others
    /// are refused. Before, each was checked against the old key before any was stored, all got
    /// 200, and the last stored won, which could be an attacker's holding the old key.
    @Test func concurrentRotationsWithOneOldKeyReplaceItOnce() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)
        let url = BackendClient.dispatchTargetURL(backend, device.dispatchTargetId)
        let newKeys = try (0..<8).map { _ in try P256.Signing.PrivateKey() }
        let requests = try newKeys.map { key in
            let jwk = try #require(
                try JSONSerialization.jsonObject(with: Data(key.publicKey.jwk.jsonString.utf8)) as? [String: String])
            return (jwk, try device.signer.headerValue())
        }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for (jwk, signature) in requests {
                group.addTask {
                    try await BackendClient.send(
                        "PATCH", url, json: ["signatureKey": jwk],
                        headers: [DeviceSignatureSigner.headerName: signature]
                    ).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
        #expect(statuses.filter { $0 == 401 }.count == 7, "\(statuses)")
    }

    /// The check the rotation above relies on: a key is replaced only while it is the one the
    /// request was checked with.
    @Test func keysAreReplacedOnlyWhileTheCheckedKeyIsCurrent() throws {
        let state = BackendState()
        let old = try P256.Signing.PrivateKey().publicKey
        let record = DispatchTargetRecord(
            id: "t1", extId: "e1", username: "", deviceId: "d", name: "", target: "", dispatcher: "",
            signatureKey: old, encryptionKey: nil)
        #expect(state.register(record, by: .device(signedBy: nil)) == .registered)
        let first = try P256.Signing.PrivateKey().publicKey
        let second = try P256.Signing.PrivateKey().publicKey
        #expect(state.updateKeys(of: "t1", replacing: old, signatureKey: first, encryptionKey: nil) == .updated)
        #expect(
            state.updateKeys(of: "t1", replacing: old, signatureKey: second, encryptionKey: nil) == .signatureKeyChanged
        )
        #expect(state.target("t1")?.signatureKey.x963Representation == first.x963Representation)
    }

    @Test func aFurtherDispatchTargetNeedsASignatureOfTheDevice() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        // First registrations of two devices: open.
        let phoneKey = try P256.Signing.PrivateKey()
        let first = try await register(backend, deviceId: "phone-1", key: phoneKey.publicKey)
        #expect(first.status == 201)
        let phoneTarget = try #require(first.json["id"] as? String)
        let phone = try DeviceSignatureSigner(key: phoneKey, dispatchTargetId: phoneTarget, clock: clock)
        let otherKey = try P256.Signing.PrivateKey()
        let other = try await register(backend, deviceId: "phone-2", key: otherKey.publicKey)
        let otherTarget = try #require(other.json["id"] as? String)
        let otherDevice = try DeviceSignatureSigner(key: otherKey, dispatchTargetId: otherTarget, clock: clock)

        // A further one for phone-1: unsigned, by another device's target, by a stranger's key.
        let attackerKey = try P256.Signing.PrivateKey()
        let strangerAsPhone = try DeviceSignatureSigner(key: attackerKey, dispatchTargetId: phoneTarget, clock: clock)
        let strangerUnknown = try DeviceSignatureSigner(key: attackerKey, dispatchTargetId: "made-up", clock: clock)
        for signer in [nil, otherDevice, strangerAsPhone, strangerUnknown] {
            let refused = try await register(backend, deviceId: "phone-1", key: attackerKey.publicKey, signedBy: signer)
            let name = signer?.dispatchTargetId ?? "unsigned"
            #expect(refused.status == 401, "\(name)")
            #expect(refused.errorCode == "INVALID_SIGNATURE", "\(name)")
        }
        #expect(backend.dispatchTargetIds(ofDevice: "phone-1") == [phoneTarget], "no target was added")
        #expect(
            backend.statistics.rejections == [
                "SIGNATURE_REQUIRED": 1, "FOREIGN_DISPATCH_TARGET": 1,
                "INVALID_SIGNATURE": 1, "UNKNOWN_DISPATCH_TARGET": 1,
            ])

        // Signed by phone-1's own target: a second target, whose key then reads phone-1's operations.
        let secondKey = try P256.Signing.PrivateKey()
        let second = try await register(backend, deviceId: "phone-1", key: secondKey.publicKey, signedBy: phone)
        #expect(second.status == 201)
        let secondTarget = try #require(second.json["id"] as? String)
        #expect(backend.dispatchTargetIds(ofDevice: "phone-1") == [phoneTarget, secondTarget])
        let operation = try backend.dispatch(deviceId: "phone-1", channel: "link")
        let secondSigner = try DeviceSignatureSigner(key: secondKey, dispatchTargetId: secondTarget, clock: clock)
        let secondDevice = TestDevice(
            deviceId: "phone-1", key: secondKey, dispatchTargetId: secondTarget,
            signer: secondSigner)
        #expect(try await BackendClient.fetch(backend, secondDevice).tokens == [operation.token])
    }

    @Test func aSignedFurtherRegistrationIsCheckedLikeEveryDeviceRequest() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)
        let key = try P256.Signing.PrivateKey().publicKey
        let value = try device.signer.headerValue()
        #expect(try await register(backend, deviceId: device.deviceId, key: key, signature: value).status == 201)
        let replayed = try await register(backend, deviceId: device.deviceId, key: key, signature: value)
        #expect(replayed.status == 401 && replayed.errorCode == "REPLAYED_REQUEST")
        let later = ManualWallClock(millis: start + 600_000)
        let skewedSigner = try DeviceSignatureSigner(
            key: device.key, dispatchTargetId: device.dispatchTargetId,
            clock: later)
        let skewed = try await register(backend, deviceId: device.deviceId, key: key, signedBy: skewedSigner)
        #expect(skewed.status == 401 && skewed.errorCode == "CLOCK_SKEW_TOO_BIG")
        #expect(backend.dispatchTargetIds(ofDevice: device.deviceId).count == 2)
    }
}

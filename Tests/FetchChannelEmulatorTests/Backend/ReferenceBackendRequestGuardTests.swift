import DeviceSigning
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelEmulator

/// What the backend refuses before a route runs, and how it words refusals so that they tell an
/// attacker nothing: loopback Host only, JSON bodies only, one Device-Signature field, and no
/// answer that says whether a dispatch target exists.
@Suite(.dedicatedThread) struct ReferenceBackendRequestGuardTests {
    let start: Int64 = 1_700_000_000_000

    /// The emulator is never exposed, even when its HTTP configuration would allow it.
    @Test func listensOnLoopbackOnlyWhateverTheHTTPConfigurationSays() {
        let exposed = ReferenceBackend.Configuration(
            host: "0.0.0.0", http: HTTPServer.Configuration(allowNonLoopback: true))
        #expect(throws: HTTPServerError(.nonLoopbackHost)) { try ReferenceBackend.start(exposed) }
    }

    @Test func onlyRequestsAddressedToLoopbackAreAnswered() async throws {
        let backend = try ReferenceBackend.start()
        defer { backend.stop() }
        let answered = [
            "127.0.0.1", "127.0.0.1:8080", "127.9.8.7:1", "localhost", "LocalHost:443", "localhost:",
            "[::1]", "[::1]:65535", "[0:0:0:0:0:0:0:1]:80", "[::ffff:127.0.0.1]",
        ]
        let misdirected = [
            "evil.example", "evil.example:8080", "localhost.", "localhost.evil.example",
            "127.0.0.1.nip.io", "10.0.0.1", "0.0.0.0", "::1", "[127.0.0.1]", "[localhost]",
            "127.0.0.1:http", "127.0.0.1:65536", "user@127.0.0.1", "127.0.0.1:80:80", "[::2]", "",
        ]
        for host in answered + misdirected {
            let answer = try await BackendClient.raw(backend, "GET /_emulator/stats HTTP/1.1\r\nHost: \(host)\r\n\r\n")
            #expect(answer.status == (answered.contains(host) ? 200 : 421), "Host: \(host)")
        }
        // The device endpoints too, and every authority the request names: an absolute-form
        // target's, and the Host of an HTTP/1.0 request, which may be missing.
        let device = try TestDevice(backend: backend, clock: SystemWallClock())
        let path = "/nevisfido/devices/outofbandoperations/\(device.deviceId)"
        let signed = { (target: String, host: String) -> String in
            let signature = try device.signer.headerValue()
            return "GET \(target) HTTP/1.1\r\nHost: \(host)\r\nDevice-Signature: \(signature)\r\n\r\n"
        }
        let statuses = [
            try await BackendClient.raw(backend, try signed(path, "attacker.example:80")).status,
            try await BackendClient.raw(backend, try signed("http://attacker.example" + path, "127.0.0.1")).status,
            try await BackendClient.raw(backend, try signed("http://localhost:1" + path, "127.0.0.1")).status,
            try await BackendClient.raw(backend, try signed(path, "127.0.0.1")).status,
            try await BackendClient.raw(backend, "GET /_emulator/stats HTTP/1.0\r\n\r\n").status,
        ]
        #expect(statuses == [421, 421, 200, 200, 421])
        let rebound = "GET /_emulator/stats HTTP/1.1\r\nHost: rebound.example\r\n\r\n"
        let refused = try await BackendClient.raw(backend, rebound)
        #expect(refused.reason == "Misdirected Request")
        #expect(refused.bodyText.contains("MISDIRECTED_REQUEST"))
    }

    @Test func requestBodiesMustBeJSON() async throws {
        let backend = try ReferenceBackend.start()
        defer { backend.stop() }
        let dispatch = #"{"deviceId":"phone-1","channel":"link"}"#
        let accepted = [
            "Content-Type: application/json\r\n", "content-type: Application/JSON; charset=UTF-8\r\n",
            "Content-Type: application/json;charset=utf-8\r\n",
        ]
        let refused = [
            "", "Content-Type: text/plain\r\n", "Content-Type: application/x-www-form-urlencoded\r\n",
            "Content-Type: multipart/form-data; boundary=x\r\n", "Content-Type: application/jsonp\r\n",
            "Content-Type: application/json-seq\r\n", "Content-Type: application/json, text/plain\r\n",
            "Content-Type: application/json\r\nContent-Type: application/json\r\n",
        ]
        for headers in accepted + refused {
            let answer = try await BackendClient.rawPost(
                backend, "/_emulator/dispatch", body: dispatch,
                headers: headers)
            #expect(answer.status == (accepted.contains(headers) ? 201 : 415), "\(headers.debugDescription)")
        }
        let key = try P256.Signing.PrivateKey()
        let registration = #"{"deviceId":"phone-2","signatureKey":\#(key.publicKey.jwk.jsonString)}"#
        let device = try TestDevice(backend: backend, clock: SystemWallClock())
        let operation = try backend.dispatch(deviceId: device.deviceId, channel: "link")
        let plain = "Content-Type: text/plain\r\n"
        let rotation =
            "PATCH /nevisfido/token/dispatch/targets/\(device.dispatchTargetId) HTTP/1.1\r\n"
            + "Host: 127.0.0.1\r\nContent-Length: 2\r\nDevice-Signature: \(try device.signer.headerValue())\r\n\r\n{}"
        let redemption = #"{"token":"\#(operation.token)"}"#
        let targets = "/nevisfido/token/dispatch/targets"
        let refusedOnDeviceEndpoints = [
            try await BackendClient.rawPost(backend, targets, body: registration, headers: plain),
            try await BackendClient.rawPost(
                backend, "/nevisfido/token/redeem/authentication", body: redemption,
                headers: plain),
            try await BackendClient.raw(backend, rotation),
        ]
        #expect(refusedOnDeviceEndpoints.map(\.status) == [415, 415, 415])
        #expect(refusedOnDeviceEndpoints.allSatisfy { $0.bodyText.contains("UNSUPPORTED_MEDIA_TYPE") })
        // Nothing was done: no target for phone-2, the operation still pending, no endpoint reached.
        #expect(backend.dispatchTargetIds(ofDevice: "phone-2").isEmpty)
        #expect(backend.statistics.redemptions[operation.token] == nil)
        #expect(backend.statistics.requests == [:])
        // A JSON body on a device endpoint is served.
        let registered = try await BackendClient.rawPost(
            backend, targets, body: registration,
            headers: "Content-Type: application/json; charset=UTF-8\r\n")
        #expect(registered.status == 201)
    }

    @Test func aRequestWithTwoDeviceSignatureFieldsIsMalformed() async throws {
        let backend = try ReferenceBackend.start()
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: SystemWallClock())
        let head = "GET /nevisfido/devices/outofbandoperations/\(device.deviceId) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for names in [("Device-Signature", "Device-Signature"), ("Device-Signature", "device-SIGNATURE")] {
            // Both values are valid signatures of the device: only their number is wrong.
            let request =
                head + "\(names.0): \(try device.signer.headerValue())\r\n"
                + "\(names.1): \(try device.signer.headerValue())\r\n\r\n"
            let answer = try await BackendClient.raw(backend, request)
            #expect(answer.status == 400, "\(names)")
            #expect(answer.bodyText.contains("MALFORMED_REQUEST"), "\(names)")
        }
        let one = head + "Device-Signature: \(try device.signer.headerValue())\r\n\r\n"
        #expect(try await BackendClient.raw(backend, one).status == 200)
    }

    @Test func anUnknownDispatchTargetAnswersAsAnInvalidSignature() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)
        let impostorKey = try P256.Signing.PrivateKey()
        let impostor = try DeviceSignatureSigner(
            key: impostorKey, dispatchTargetId: device.dispatchTargetId,
            clock: clock)
        let stranger = try DeviceSignatureSigner(key: device.key, dispatchTargetId: "no-such-target", clock: clock)

        let badSignature = try await BackendClient.fetch(backend, device, signature: impostor.headerValue())
        let unknownTarget = try await BackendClient.fetch(backend, device, signature: stranger.headerValue())
        #expect(unknownTarget.status == 401)
        #expect(unknownTarget.errorCode == "INVALID_SIGNATURE")
        #expect(unknownTarget.body == badSignature.body, "the same answer whether the dispatch target exists or not")
        let url = backend.baseURL.appendingPathComponent("nevisfido/token/dispatch/targets/no-such-target")
        let strangerHeader = [DeviceSignatureSigner.headerName: try stranger.headerValue()]
        let rotation = try await BackendClient.send(
            "PATCH", url, json: ["signatureKey": [String: String]()],
            headers: strangerHeader)
        #expect(rotation.status == 401 && rotation.body == badSignature.body)

        // The statistics keep the difference.
        let expected = ["INVALID_SIGNATURE": 1, "UNKNOWN_DISPATCH_TARGET": 2]
        #expect(backend.statistics.rejections == expected)
        let stats = try await BackendClient.send("GET", backend.baseURL.appendingPathComponent("_emulator/stats"))
        #expect(stats.json["rejections"] as? [String: Int] == expected)
    }

    /// A method an endpoint does not take is 405 before the request is counted or a fault is
    /// taken: before, the operations endpoint counted it and used up the fault meant for the
    /// next fetch, answering it with the fault instead of 405.
    @Test func aWrongMethodIsRefusedWithoutCountingTheRequestOrTakingAFault() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)
        let operation = try backend.dispatch(deviceId: device.deviceId, channel: "link")
        for endpoint in EmulatorEndpoint.allCases {
            try backend.injectFault(EmulatorFault(endpoint: endpoint, kind: .status, status: 503, count: 1))
        }
        let base = backend.baseURL
        let wrong: [(String, URL, String)] = [
            (
                "DELETE", base.appendingPathComponent("nevisfido/devices/outofbandoperations/\(device.deviceId)"),
                "GET, HEAD"
            ),
            ("GET", try #require(URL(string: operation.redeemURL)), "POST"),
            ("GET", base.appendingPathComponent("nevisfido/token/dispatch/targets"), "POST"),
            ("DELETE", BackendClient.dispatchTargetURL(backend, device.dispatchTargetId), "PATCH"),
        ]
        for (method, url, allowed) in wrong {
            let answer = try await BackendClient.send(method, url)
            #expect(answer.status == 405, "\(method) \(url.path)")
            #expect(answer.header("Allow") == allowed, "\(method) \(url.path)")
        }
        #expect(backend.statistics.requests == [:])
        // The faults still wait for the requests they were meant for.
        #expect(try await BackendClient.fetch(backend, device).status == 503)
        #expect(try await BackendClient.fetch(backend, device).status == 200)
        #expect(try await BackendClient.redeem(operation.redeemURL, token: operation.token).status == 503)
        #expect(try await BackendClient.redeem(operation.redeemURL, token: operation.token).status == 200)
    }
}

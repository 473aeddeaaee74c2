import DeviceSigning
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelEmulator

/// HEAD wherever GET is (RFC 9110 §9.1): the GET's answer without its body, `Allow: GET, HEAD`.
/// Before, a HEAD of the pending operations or the statistics was refused with 405.
@Suite(.dedicatedThread) struct ReferenceBackendHeadTests {
    let start: Int64 = 1_700_000_000_000

    static func request(_ method: String, _ path: String, signature: String? = nil) -> String {
        "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + (signature.map { "\(DeviceSignatureSigner.headerName): \($0)\r\n" } ?? "") + "\r\n"
    }

    @Test func theStatisticsAnswerHEADAsGETWithoutTheBody() async throws {
        let backend = try ReferenceBackend.start()
        defer { backend.stop() }
        let head = try await BackendClient.raw(backend, Self.request("HEAD", WirePaths.Emulator.stats))
        let get = try await BackendClient.raw(backend, Self.request("GET", WirePaths.Emulator.stats))
        #expect(head.status == 200 && get.status == 200)
        #expect(head.body.isEmpty && !get.body.isEmpty)
        #expect(head.headers["Content-Length"] == String(get.body.count))
        #expect(head.headers["Content-Type"] == get.headers["Content-Type"])

        let wrong = try await BackendClient.raw(backend, Self.request("PUT", WirePaths.Emulator.stats))
        #expect(wrong.status == 405)
        #expect(wrong.headers["Allow"] == "GET, HEAD")
    }

    /// A HEAD of the pending operations is the GET: signed and verified (its request id spent),
    /// counted once, and answered with the GET's headers; it changes nothing else.
    @Test func thePendingOperationsAnswerHEADAsGETWithoutTheBody() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)
        let operation = try backend.dispatch(deviceId: device.deviceId, channel: "link")
        let path = WirePaths.basePath + WirePaths.pendingOperations + "/" + device.deviceId

        let signature = try device.signer.headerValue()
        let head = try await BackendClient.raw(backend, Self.request("HEAD", path, signature: signature))
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(backend.statistics.requests == [EmulatorEndpoint.operations.rawValue: 1])

        let get = try await BackendClient.raw(
            backend, Self.request("GET", path, signature: try device.signer.headerValue()))
        #expect(get.status == 200)
        #expect(get.bodyText.contains(operation.token))
        #expect(head.headers["Content-Length"] == String(get.body.count))
        #expect(head.headers["Content-Type"] == get.headers["Content-Type"])
        #expect(backend.statistics.requests == [EmulatorEndpoint.operations.rawValue: 2])

        // The HEAD's request id was spent, as a GET's is.
        let replayed = try await BackendClient.raw(backend, Self.request("GET", path, signature: signature))
        #expect(replayed.status == 401)
        #expect(replayed.bodyText.contains(WireErrorCode.replayedRequest.rawValue))
        // A refused HEAD: the error's head, without its body.
        let unsigned = try await BackendClient.raw(backend, Self.request("HEAD", path))
        #expect(unsigned.status == 400)
        #expect(unsigned.body.isEmpty)
        #expect(unsigned.headers["Content-Length"].flatMap(Int.init) ?? 0 > 0)
        // Still pending, and still redeemable once.
        #expect(try await BackendClient.redeem(operation.redeemURL, token: operation.token).status == 200)
    }
}

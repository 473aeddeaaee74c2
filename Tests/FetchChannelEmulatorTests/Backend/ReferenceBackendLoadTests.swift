import DeviceSigning
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelEmulator

extension HTTPServerTests {
    /// Under the serialized HTTP parent suite because it counts the process's descriptors.
    @Suite struct ReferenceBackendLoadTests {
        @Test func sixteenClientsFiveHundredSignedFetchesEach() throws {
            let clients = 16
            let fetchesPerClient = 500
            let clock = ManualWallClock(millis: 1_700_000_000_000)
            let backend = try ReferenceBackend.start(.init(clock: clock))
            defer { backend.stop() }
            let devices = try (0..<clients).map { _ in try TestDevice(backend: backend, clock: clock) }
            for device in devices {
                try backend.dispatch(deviceId: device.deviceId, channel: "firebase-cloud-messaging")
            }
            let port = backend.baseURL.port ?? 0

            let correct = HTTPTestSupport.onThreads(clients) { index -> Int in
                let device = devices[index]
                guard let client = try? RawHTTPClient(port: port) else { return 0 }
                var answered = 0
                for _ in 0..<fetchesPerClient {
                    guard let signature = try? device.signer.headerValue() else { break }
                    let request =
                        "GET /nevisfido/devices/outofbandoperations/\(device.deviceId) HTTP/1.1\r\n"
                        + "Host: 127.0.0.1\r\n\(DeviceSignatureSigner.headerName): \(signature)\r\n\r\n"
                    guard let response = try? client.roundTrip(request), response.status == 200,
                        let json = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
                        (json["operations"] as? [Any])?.count == 1
                    else { break }
                    answered += 1
                }
                client.close()
                return answered
            }
            #expect(correct == Array(repeating: fetchesPerClient, count: clients))
            #expect(backend.statistics.requests(to: .operations) == clients * fetchesPerClient)
            #expect(HTTPTestSupport.socketDescriptorCount(port: port) >= 1, "the listener is visible to the leak check")
            backend.stop()
            #expect(backend.serverStatistics.openConnections == 0)
            #expect(backend.serverStatistics.liveThreads == 0)
            // Every socket to or from the server's port is closed: nothing leaked on either side.
            #expect(
                HTTPTestSupport.waitUntil { HTTPTestSupport.socketDescriptorCount(port: port) == 0 },
                "sockets on port \(port) still open: \(HTTPTestSupport.socketDescriptorCount(port: port))")
        }
    }
}

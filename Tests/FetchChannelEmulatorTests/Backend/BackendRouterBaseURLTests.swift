import DeviceSigning
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelEmulator

/// The redeem URL of a dispatched operation is absolute: the backend knows its own URL before it
/// accepts a request, and a router that does not know it yet refuses to dispatch. Before, the
/// server accepted before the URL was set, and a dispatch in between stored a relative redeemUrl.
@Suite struct BackendRouterBaseURLTests {
    static let start: Int64 = 1_750_000_000_000

    @Test func aDispatchBeforeTheBaseURLIsKnownIsRefused() throws {
        let clock = ServerClock(base: ManualWallClock(millis: Self.start), offsetMillis: 0)
        let state = BackendState()
        let verifier = try DeviceSignatureVerifier(clock: clock, keyLookup: { state.target($0)?.signatureKey })
        let router = BackendRouter(
            configuration: ReferenceBackend.Configuration(), state: state, clock: clock, verifier: verifier,
            baseURL: Locked(""))
        func dispatch() throws -> HTTPResponse {
            let request = HTTPRequest(
                method: "POST", target: WirePaths.Emulator.dispatch,
                headers: [WireHeader.host: "127.0.0.1", WireHeader.contentType: WireMediaType.json],
                body: Array(#"{"deviceId":"phone","channel":"link"}"#.utf8))
            guard case .respond(let response) = router.handle(request) else {
                throw EmulatorError(code: .dispatchRefused, reason: "no plain answer")
            }
            return response
        }

        let refused = try dispatch()
        #expect(refused.status == 503)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: Any])
        #expect(body[WireErrorCode.Member.errorCode] as? String == WireErrorCode.notStarted.rawValue)
        #expect(state.pendingOperations(for: "phone", nowMillis: Self.start).isEmpty)

        router.baseURL.withLock { $0 = "http://127.0.0.1:1" }
        let dispatched = try dispatch()
        #expect(dispatched.status == 201)
        let pending = state.pendingOperations(for: "phone", nowMillis: Self.start)
        #expect(pending.map(\.redeemURL) == ["http://127.0.0.1:1/nevisfido/token/redeem/authentication"])
    }

    /// The server hands its address over before it accepts: a client that connects and sends
    /// from inside `beforeAccepting` waits in the listen queue until the callback has returned,
    /// and its request is then handled with the address known. Checked from inside the callback,
    /// so that an engine that started its accept thread first (or called the callback after it)
    /// fails here; a client that connects after `start` returned could not tell.
    ///
    /// That the server does not accept meanwhile is checked by waiting for its side of the
    /// connection to appear among this process's descriptors: nothing signals an accept that
    /// does not happen, so the wait is bounded, 300 ms (an accept thread that runs takes the
    /// connection in well under that), and with a correct server it always lasts the full 300 ms.
    @Test(.dedicatedThread) func theServerTellsItsAddressBeforeItAccepts() throws {
        let known = Locked("")
        let server = HTTPServer(configuration: HTTPServer.Configuration(host: "127.0.0.1", port: 0)) { _ in
            .respond(.text(status: 200, known.withLock { $0 }))
        }
        defer { server.stop() }
        var early: Result<(client: RawHTTPClient, acceptedMeanwhile: Bool), any Error>?
        let address = try server.start(beforeAccepting: { address in
            early = Result {
                let client = try RawHTTPClient(port: address.port)
                try client.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                let clientPort = try #require(LoopbackSockets.localPort(of: client.fd))
                let accepted = HTTPTestSupport.waitUntil(timeout: .milliseconds(300)) {
                    !LoopbackSockets.descriptors(withPeerPort: clientPort).isEmpty
                }
                return (client, accepted)
            }
            known.withLock { $0 = address.baseURL.absoluteString }
        })
        let (client, acceptedMeanwhile) = try #require(early).get()
        defer { client.close() }
        #expect(!acceptedMeanwhile, "the server accepted a connection before beforeAccepting returned")
        let answer = try client.readResponse()
        #expect(answer.bodyText == address.baseURL.absoluteString, "the handler ran before the address was known")
    }
}

import Foundation
import Glibc
import Testing

@testable import FetchChannelEmulator

extension HTTPServerTests {
    /// Malformed requests over a real socket: each is answered (or the connection closed), the
    /// connection ends, and the server goes on serving well-formed requests on other connections.
    @Suite struct MalformedRequestTests {
        struct WireCase: CustomTestStringConvertible, Sendable {
            let name: String
            let bytes: [UInt8]
            /// The status the server must answer with.
            let status: Int
            /// Whether a close without a readable answer is acceptable too (the client may be
            /// reset while it is still sending a huge request).
            var closeIsAcceptable = false
            var testDescription: String { name }
        }

        static let cases: [WireCase] = [
            WireCase(
                name: "200 KB header",
                bytes: Array(
                    ("GET / HTTP/1.1\r\nHost: x\r\nX-Big: "
                        + String(repeating: "b", count: 200 * 1024) + "\r\n\r\n").utf8), status: 431,
                closeIsAcceptable: true),
            WireCase(
                name: "negative Content-Length",
                bytes: Array("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n".utf8), status: 400),
            WireCase(
                name: "huge Content-Length",
                bytes: Array("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 184467440737095516160\r\n\r\n".utf8),
                status: 400),
            WireCase(
                name: "conflicting Content-Length",
                bytes: Array("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd".utf8),
                status: 400),
            WireCase(
                name: "body over 1 MiB",
                bytes: Array("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2097152\r\n\r\n".utf8), status: 413),
            WireCase(
                name: "chunked body",
                bytes: Array(
                    "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".utf8),
                status: 411),
            WireCase(
                name: "binary garbage",
                bytes: [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03, 0x00, 0xFF, 0xFE], status: 400
            ),
            WireCase(
                name: "binary garbage with line feeds", bytes: [0x00, 0x0A, 0x0D, 0x0A, 0x7F, 0x80, 0x0A], status: 400),
            WireCase(name: "HTTP/2.0", bytes: Array("GET / HTTP/2.0\r\nHost: x\r\n\r\n".utf8), status: 505),
            WireCase(name: "HTTP/2 preface", bytes: Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8), status: 505),
            WireCase(
                name: "target too long",
                bytes: Array(("GET /" + String(repeating: "t", count: 9000) + " HTTP/1.1\r\nHost: x\r\n\r\n").utf8),
                status: 414),
            WireCase(
                name: "obs-fold", bytes: Array("GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n\tb\r\n\r\n".utf8), status: 400),
            WireCase(
                name: "whitespace before colon", bytes: Array("GET / HTTP/1.1\r\nHost : x\r\n\r\n".utf8), status: 400),
            WireCase(name: "bare CR", bytes: Array("GET / HTTP/1.1\r\nHost: x\rY: z\r\n\r\n".utf8), status: 400),
            WireCase(name: "missing Host", bytes: Array("GET / HTTP/1.1\r\n\r\n".utf8), status: 400),
            WireCase(
                name: "101 header fields",
                bytes: Array(
                    ("GET / HTTP/1.1\r\nHost: x\r\n"
                        + (0..<100).map { "X-\($0): v\r\n" }.joined() + "\r\n").utf8), status: 431),
        ]

        @Test(arguments: cases)
        func isRefusedAndTheServerStaysUp(_ wireCase: WireCase) throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            // Sending may fail half-way when the server refuses early and the close resets it.
            try? client.send(wireCase.bytes)
            do {
                let response = try client.readResponse()
                #expect(response.status == wireCase.status, "\(wireCase.name)")
                #expect(response.headers["Connection"] == "close", "\(wireCase.name)")
                #expect(response.headers["Date"] != nil && response.headers["Content-Length"] != nil)
            } catch RawHTTPClient.ClientError.closed {
                #expect(wireCase.closeIsAcceptable, "\(wireCase.name): closed without an answer")
            }
            #expect(client.waitForClose() == .closed, "\(wireCase.name): the connection stays open")
            #expect(HTTPTestSupport.serverStillAnswers(port: address.port), "\(wireCase.name)")
            #expect(server.statistics.totalRequests == 1, "\(wireCase.name): only the health check reached the handler")
        }

        @Test func truncatedRequestLineThenCloseGetsNoAnswer() throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            try client.send("GET /trunc")
            client.shutdownWrite()
            #expect(try client.readUntilClose() == [])
            #expect(HTTPTestSupport.serverStillAnswers(port: address.port))
            #expect(HTTPTestSupport.waitUntil { server.openConnectionCount == 0 })
        }

        @Test func randomGarbageNeverTakesTheServerDown() throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }

            var random = HTTPTestRandom(seed: 42)
            for round in 0..<60 {
                let client = try RawHTTPClient(port: address.port)
                try? client.send(random.httpishBytes(count: Int.random(in: 1...2_000, using: &random)))
                client.shutdownWrite()
                #expect(client.waitForClose() == .closed, "round \(round)")
            }
            #expect(HTTPTestSupport.serverStillAnswers(port: address.port))
            #expect(HTTPTestSupport.waitUntil { server.openConnectionCount == 0 })
        }

        @Test func garbageOnManyConnectionsDoesNotBlockOthers() throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }

            // Connections that send half a request and then nothing hold a thread each, not the server.
            let stalled = try (0..<8).map { _ in try RawHTTPClient(port: address.port) }
            for client in stalled {
                try client.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly a part")
            }
            #expect(HTTPTestSupport.serverStillAnswers(port: address.port))
            #expect(HTTPTestSupport.waitUntil { server.openConnectionCount == 8 })
        }
    }
}

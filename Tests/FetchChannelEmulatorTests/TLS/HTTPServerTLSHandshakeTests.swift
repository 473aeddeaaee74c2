import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelEmulator

extension HTTPServerTests {
    /// Handshakes run under the request deadlines: plaintext and silent clients are closed, the
    /// server keeps serving (docs/ARCHITECTURE.md, "Transport and trust").
    @Suite(.enabled(if: TLSTestSupport.toolsAvailable, "needs curl on PATH"))
    struct HTTPServerTLSHandshakeTests {
        private static func startTLSServer(
            idleTimeout: Duration = .seconds(10), requestTimeout: Duration = .seconds(10), maxConnections: Int = 64
        ) throws -> (HTTPServer, HTTPServerAddress, TLSServerIdentity) {
            var configuration = HTTPTestSupport.configuration(
                idleTimeout: idleTimeout, requestTimeout: requestTimeout, maxConnections: maxConnections)
            let identity = try TLSServerIdentity.generate()
            configuration.tlsIdentity = identity
            let (server, address) = try HTTPTestSupport.startServer(configuration)
            return (server, address, identity)
        }

        /// curl with the identity's pin (no CA needed: -k skips the chain, the pin still must match).
        private static func answersOverTLS(_ address: HTTPServerAddress, _ identity: TLSServerIdentity) throws -> Bool {
            let result = try TLSTestSupport.curlStatus(
                address.baseURL.absoluteString + "/health",
                ["-k", "--pinnedpubkey", identity.pin])
            return result.status == 0 && result.output == "200"
        }

        @Test func plaintextHTTPGetsNoHTTPAnswerAndTheServerGoesOn() async throws {
            let (server, address, identity) = try Self.startTLSServer()
            defer { server.stop() }
            let (answer, stillServes) = try await DedicatedThreads.run {
                let client = try RawHTTPClient(port: address.port)
                try client.send(HTTPTestSupport.get("/health"))
                let answer = try client.readUntilClose(timeout: .seconds(5))
                return (answer, try Self.answersOverTLS(address, identity))
            }
            #expect(!String(decoding: answer, as: UTF8.self).contains("HTTP/"), "\(answer)")
            #expect(stillServes)
            #expect(server.statistics.totalRequests == 1, "only curl's request reached the handler")
        }

        @Test func aClientThatNeverSendsAClientHelloIsClosedAtTheIdleDeadline() async throws {
            let (server, address, identity) = try Self.startTLSServer(idleTimeout: .milliseconds(200))
            defer { server.stop() }
            let (outcome, stillServes) = try await DedicatedThreads.run {
                let client = try RawHTTPClient(port: address.port)
                return (client.waitForClose(timeout: .seconds(10)), try Self.answersOverTLS(address, identity))
            }
            #expect(outcome == .closed)
            #expect(stillServes)
            #expect(HTTPTestSupport.waitUntil { server.statistics.openConnections == 0 })
        }

        @Test func keptAliveRequestsShareOneHandshake() async throws {
            let (server, address, identity) = try Self.startTLSServer()
            defer { server.stop() }
            let url = address.baseURL.absoluteString + "/health"
            let result = try await DedicatedThreads.run {
                try ExternalTool.run(
                    TLSTestSupport.curl,
                    [
                        "-sS", "-w", "%{http_code} ", "-k", "--pinnedpubkey",
                        identity.pin,
                    ]
                        + Array(
                            repeating: ["-o", "/dev/null", url],
                            count: 3
                        ).flatMap { $0 })
            }
            #expect(result.status == 0 && result.output == "200 200 200 ", "\(result.summary)")
            #expect(server.statistics.totalRequests == 3)
            #expect(server.statistics.totalAccepted == 1, "one connection, kept alive")
        }

        /// A TLS 1.3 KeyUpdate on an idle kept-alive connection is a record without a request:
        /// libssl reads it, and the connection is idle again, evictable at the cap and kept until
        /// the idle deadline. It used to count as a request begun: busy, and closed after the
        /// request timeout (here a minute, so the connection stays busy throughout and the second
        /// client, started a process launch later, finds no room).
        @Test func aKeyUpdateOnAnIdleConnectionLeavesItIdle() async throws {
            let (server, address, identity) = try Self.startTLSServer(
                idleTimeout: .seconds(120), requestTimeout: .seconds(60), maxConnections: 1)
            defer { server.stop() }
            let (status, wasIdle, served) = try await DedicatedThreads.run {
                let client = try TLSTestClient(port: address.port)
                let status = try client.send(HTTPTestSupport.get("/health"))
                guard HTTPTestSupport.waitUntil({ server.statistics.idleConnections == 1 }) else {
                    return (status, false, false)
                }
                try client.sendKeyUpdate()
                // Idle, so a second client takes its place at the cap. The connection is busy for
                // the moment it reads the KeyUpdate: a client refused in that moment tries again
                // once it is idle (with the old behaviour it never is again within the test).
                for _ in 0..<5 {
                    guard HTTPTestSupport.waitUntil({ server.statistics.idleConnections == 1 }) else { break }
                    if try Self.answersOverTLS(address, identity) { return (status, true, true) }
                }
                return (status, true, false)
            }
            #expect(status == "HTTP/1.1 200 OK")
            #expect(wasIdle)
            #expect(served, "the second client was refused: the KeyUpdate left the first connection busy")
            #expect(server.statistics.evictedConnections == 1)
        }

        @Test func aClientWaitingToSendItsClientHelloIsEvictedAtTheConnectionCap() async throws {
            let (server, address, identity) = try Self.startTLSServer(maxConnections: 1)
            defer { server.stop() }
            let (outcome, served) = try await DedicatedThreads.run {
                let silent = try RawHTTPClient(port: address.port)
                _ = HTTPTestSupport.waitUntil { server.statistics.idleConnections == 1 }
                let served = try Self.answersOverTLS(address, identity)
                return (silent.waitForClose(timeout: .seconds(5)), served)
            }
            #expect(served, "the new client got the only slot")
            #expect(outcome == .closed)
            #expect(server.statistics.evictedConnections == 1)
        }

        /// An idle TLS connection evicted at the cap ends with a close_notify: its client reads a
        /// clean end of the stream, as after an idle timeout. Both directions used to be shut down
        /// before the connection's thread could send it (an unexpected EOF to the client).
        @Test func anEvictedTLSConnectionEndsWithACloseNotify() async throws {
            let (server, address, identity) = try Self.startTLSServer(maxConnections: 1)
            defer { server.stop() }
            let (status, served, clean) = try await DedicatedThreads.run {
                let idle = try TLSTestClient(port: address.port)
                let status = try idle.send(HTTPTestSupport.get("/health"))
                _ = HTTPTestSupport.waitUntil { server.statistics.idleConnections == 1 }
                let served = try Self.answersOverTLS(address, identity)
                return (status, served, idle.readsCloseNotify(within: .seconds(5)))
            }
            #expect(status == "HTTP/1.1 200 OK")
            #expect(served && server.statistics.evictedConnections == 1)
            #expect(clean, "the evicted client read a close_notify")
        }

        /// At the cap a TLS client is closed without a byte: a plaintext 503 is not TLS.
        @Test func aTLSClientRefusedAtTheCapGetsNoPlaintext() async throws {
            let (server, address, _) = try Self.startTLSServer(maxConnections: 1)
            defer { server.stop() }
            let answer = try await DedicatedThreads.run {
                // The first bytes of a ClientHello, then nothing: busy in its handshake, not evictable.
                let busy = try RawHTTPClient(port: address.port)
                try busy.send([0x16, 0x03, 0x01])
                guard HTTPTestSupport.waitUntil({ server.statistics.openConnections == 1 }) else { return [UInt8]() }
                let refused = try RawHTTPClient(port: address.port)
                try refused.send([0x16, 0x03, 0x01, 0x00, 0x05])
                return try refused.readUntilClose(timeout: .seconds(10))
            }
            #expect(server.statistics.rejectedConnections == 1)
            #expect(answer.isEmpty, "\(String(decoding: answer, as: UTF8.self))")
        }

        @Test func aClientThatStallsInTheHandshakeIsClosedAtTheRequestDeadline() async throws {
            let (server, address, _) = try Self.startTLSServer(requestTimeout: .milliseconds(300))
            defer { server.stop() }
            let outcome = try await DedicatedThreads.run {
                let client = try RawHTTPClient(port: address.port)
                // The first bytes of a TLS record header (handshake, TLS 1.0 record version), then nothing.
                try client.send([0x16, 0x03, 0x01])
                return client.waitForClose(timeout: .seconds(10))
            }
            #expect(outcome == .closed)
        }
    }
}

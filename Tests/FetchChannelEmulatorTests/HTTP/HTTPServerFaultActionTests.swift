import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelEmulator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HTTPServerTests {
    /// The fault actions the emulator builds on, seen from a client.
    @Suite struct FaultActionTests {
        private func session(timeout: TimeInterval) -> URLSession {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = timeout
            return URLSession(configuration: configuration)
        }

        @Test func respondAfterDelaysTheAnswer() throws {
            let (server, address) = try HTTPTestSupport.startServer(handler: { _ in
                .respondAfter(delayMillis: 300, .text(status: 200, "late"))
            })
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            let start = ContinuousClock.now
            let response = try client.roundTrip(HTTPTestSupport.get("/"))
            #expect(ContinuousClock.now - start >= .milliseconds(300))
            #expect(response.bodyText == "late")
            // The connection is kept after a delayed answer.
            #expect(try client.roundTrip(HTTPTestSupport.get("/")).bodyText == "late")
        }

        @Test func stopInterruptsADelay() throws {
            let entered = HTTPTestEvent()
            let (server, address) = try HTTPTestSupport.startServer(handler: { _ in
                entered.signal()
                return .respondAfter(delayMillis: 60_000, .text(status: 200, "never"))
            })
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            try client.send(HTTPTestSupport.get("/"))
            #expect(entered.wait())
            let start = ContinuousClock.now
            server.stop()
            #expect(ContinuousClock.now - start < LooseTimeBounds.scaled(.seconds(2)))
            #expect(server.statistics.liveThreads == 0)
            #expect(try client.readUntilClose(timeout: .seconds(5)) == [])
        }

        @Test func closeWithoutAnswerGivesEndOfStream() async throws {
            let (server, address) = try HTTPTestSupport.startServer(handler: { _ in .closeWithoutAnswer })
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            try client.send(HTTPTestSupport.get("/"))
            #expect(try client.readUntilClose() == [])

            let urlSession = session(timeout: 10)
            defer { urlSession.finishTasksAndInvalidate() }
            await #expect(throws: (any Error).self) {
                _ = try await urlSession.data(from: address.baseURL)
            }
        }

        @Test func respondThenHangMakesClientsTimeOut() async throws {
            let (server, address) = try HTTPTestSupport.startServer(handler: { _ in
                .respondThenHang(.text(status: 200, "partial"))
            })
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            try client.send(HTTPTestSupport.get("/"))
            // The head announces one byte more than the body that follows; the rest never comes.
            #expect(throws: RawHTTPClient.ClientError.timedOut) {
                _ = try client.readUntilClose(timeout: .milliseconds(400))
            }
            let received = String(decoding: client.pendingBytes, as: UTF8.self)
            #expect(received.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(received.hasSuffix("Content-Length: 8\r\n\r\npartial"))

            // Whole seconds: on Linux, URLSession turns a sub-second timeout into an immediate one.
            let urlSession = session(timeout: 1)
            defer { urlSession.finishTasksAndInvalidate() }
            let start = ContinuousClock.now
            do {
                _ = try await urlSession.data(from: address.baseURL)
                Issue.record("URLSession got a complete answer")
            } catch let error as URLError {
                #expect(error.code == .timedOut)
            }
            let waited = ContinuousClock.now - start
            #expect(
                waited >= .milliseconds(900) && waited < LooseTimeBounds.scaled(.seconds(5)),
                "URLSession gave up after \(waited)")

            // stop() ends the hang promptly.
            let stopStart = ContinuousClock.now
            server.stop()
            #expect(ContinuousClock.now - stopStart < LooseTimeBounds.scaled(.seconds(2)))
            #expect(client.waitForClose(timeout: .seconds(2)) == .closed)
        }

        @Test func hangEndsWhenTheClientLeaves() throws {
            let (server, address) = try HTTPTestSupport.startServer(handler: { _ in
                .respondThenHang(HTTPResponse(status: 200))
            })
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            try client.send(HTTPTestSupport.get("/"))
            #expect(throws: RawHTTPClient.ClientError.timedOut) {
                _ = try client.readResponse(timeout: .milliseconds(200))
            }
            client.close()
            #expect(HTTPTestSupport.waitUntil { server.openConnectionCount == 0 })
        }

        /// A client that never leaves held a connection slot for ever (the review's "hang holds
        /// its slot"); the hang now ends at the idle timeout.
        @Test func hangEndsAtTheIdleTimeout() throws {
            let (server, address) = try HTTPTestSupport.startServer(
                HTTPTestSupport.configuration(idleTimeout: .milliseconds(300)),
                handler: { _ in .respondThenHang(HTTPResponse(status: 200)) })
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            try client.send(HTTPTestSupport.get("/"))
            #expect(client.waitForClose(timeout: .seconds(10)) == .closed, "the hang outlived the idle timeout")
            #expect(HTTPTestSupport.waitUntil { server.openConnectionCount == 0 })
        }

        @Test func rawBytesAreWrittenVerbatim() throws {
            let garbage: [UInt8] = [0x00, 0xFF, 0x0D, 0x0A, 0x48, 0x54, 0x54, 0x50, 0x7F]
            let (server, address) = try HTTPTestSupport.startServer(handler: { request in
                if request.path == "/close" {
                    return .rawBytes(garbage, thenClose: true)
                }
                return .rawBytes(Array("HTTP/1.1 299 Custom\r\nContent-Length: 1\r\n\r\nx".utf8), thenClose: false)
            })
            defer { server.stop() }

            let closing = try RawHTTPClient(port: address.port)
            try closing.send(HTTPTestSupport.get("/close"))
            #expect(try closing.readUntilClose() == garbage)

            let keeping = try RawHTTPClient(port: address.port)
            let first = try keeping.roundTrip(HTTPTestSupport.get("/keep"))
            #expect(first.status == 299 && first.reason == "Custom" && first.bodyText == "x")
            #expect(first.headers["Date"] == nil)
            let second = try keeping.roundTrip(HTTPTestSupport.get("/keep"))
            #expect(second.status == 299)
        }
    }
}

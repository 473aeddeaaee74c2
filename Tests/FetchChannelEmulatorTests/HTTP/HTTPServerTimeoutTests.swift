import FetchChannelTestSupport
import Foundation
import Glibc
import Testing

@testable import FetchChannelEmulator

extension HTTPServerTests {
    @Suite struct TimeoutTests {
        /// Sends `bytes` one at a time every 50 ms on `fd` until done or the server closes (EPIPE).
        private static func trickle(_ bytes: [UInt8], to fd: Int32, done: HTTPTestEvent) {
            HTTPTestSupport.onThread {
                for var byte in bytes {
                    if send(fd, &byte, 1, Int32(MSG_NOSIGNAL)) != 1 { break }
                    usleep(50_000)  // Pacing the slow client is the point of the test, not a wait for a result.
                }
                done.signal()
            }
        }

        @Test(arguments: [
            "GET /slow-head HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: abcdefghijklmnop\r\n\r\n",
            "POST /slow-body HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 40\r\n\r\n0123456789012345678901234567890123456789",
        ])
        func slowlorisIsCutOffWhileOthersAreServed(request: String) throws {
            let configuration = HTTPTestSupport.configuration(requestTimeout: .milliseconds(300))
            let (server, address) = try HTTPTestSupport.startServer(configuration)
            defer { server.stop() }

            let slow = try RawHTTPClient(port: address.port)
            let bytes = Array(request.utf8)
            // For the body case, send the head at once: the deadline covers head and body together.
            let headLength = request.hasPrefix("POST") ? bytes.count - 40 : 0
            try slow.send(Array(bytes[0..<headLength]))
            let writerDone = HTTPTestEvent()
            let start = ContinuousClock.now
            Self.trickle(Array(bytes[headLength...]), to: slow.fd, done: writerDone)

            // Served while the slow client is still sending.
            #expect(HTTPTestSupport.serverStillAnswers(port: address.port))
            let answer = try? slow.readResponse(timeout: .seconds(5))
            let elapsed = ContinuousClock.now - start
            #expect(answer?.status == 408)
            #expect(slow.waitForClose() == .closed)
            // Cut off by the deadline, long before the 2 s the whole request needs at this pace,
            // although the client was never idle for 300 ms.
            #expect(elapsed >= .milliseconds(250))
            #expect(elapsed < LooseTimeBounds.scaled(.milliseconds(1_800)))
            #expect(writerDone.wait(), "the slow writer did not finish")
            #expect(server.statistics.totalRequests == 1)
        }

        /// An empty line after an answer is no request (RFC 9112 §2.2): the connection stays idle
        /// and is closed silently at the idle timeout. Before, the empty line started a request's
        /// deadline, and at its end the server wrote a 408 no one had asked for, which a client
        /// reusing the connection would have read as the answer to its next request.
        @Test func aStrayEmptyLineAfterAnAnswerIsNoRequest() throws {
            let configuration = HTTPTestSupport.configuration(
                idleTimeout: .milliseconds(600), requestTimeout: .milliseconds(150))
            let (server, address) = try HTTPTestSupport.startServer(configuration)
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            try client.send(Array("GET /one HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
            #expect(try client.readResponse(timeout: .seconds(5)).status == 200)
            try client.send(Array("\r\n".utf8))
            let rest = try client.readUntilClose(timeout: .seconds(5))
            #expect(rest.isEmpty, "\(String(decoding: rest, as: UTF8.self))")
        }

        @Test func silentConnectionIsClosedWithoutAnswer() throws {
            let configuration = HTTPTestSupport.configuration(
                idleTimeout: .milliseconds(200), requestTimeout: .milliseconds(200))
            let (server, address) = try HTTPTestSupport.startServer(configuration)
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            #expect(try client.readUntilClose(timeout: .seconds(5)) == [])
        }
    }
}

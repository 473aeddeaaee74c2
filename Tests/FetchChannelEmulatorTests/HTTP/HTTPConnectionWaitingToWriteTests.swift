import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Glibc
import Testing

@testable import FetchChannelEmulator

extension HTTPServerTests {
    /// What a TLS connection's records that carry no request do to its idle wait. The socket stays
    /// readable, and the wait for a request's first byte, finding it readable every time, read
    /// again at once: over and over, at full CPU, and past the idle deadline.
    @Suite(.dedicatedThread) struct ConnectionWaitingToWriteTests {
        /// Always readable (a byte waits in the socket pair); no read yields a request's byte.
        /// After `readsBeforeStop` reads it stops the connection, so that a spin ends the test.
        final class RecordsWithoutRequests: HTTPByteStream {
            let fd: Int32
            private let peer: Int32
            private let stop: HTTPStopSignal
            private let readsBeforeStop: Int
            /// The read stops wanting to write (a KeyUpdate's reply the socket has no room for), as
            /// a session whose client never reads would; the wait for room ends at its deadline.
            let isWaitingToWrite: Bool
            let reads = Locked(0)

            init(stop: HTTPStopSignal, isWaitingToWrite: Bool, readsBeforeStop: Int) throws {
                self.stop = stop
                self.isWaitingToWrite = isWaitingToWrite
                self.readsBeforeStop = readsBeforeStop
                var pair: [Int32] = [-1, -1]
                guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
                    throw POSIXError(.EIO)
                }
                (fd, peer) = (pair[0], pair[1])
                guard write(peer, "x", 1) == 1 else { throw POSIXError(.EIO) }
            }

            deinit {
                close(fd)
                close(peer)
            }

            var hasBufferedInput: Bool { false }

            /// Reads the waiting record, and the client sends the next at once.
            func receive(
                into buffer: inout [UInt8], until deadline: ContinuousClock.Instant?, stop: HTTPStopSignal
            ) -> HTTPSocket.ReceiveOutcome {
                let count = reads.withLock { count in
                    count += 1
                    return count
                }
                if count >= readsBeforeStop { self.stop.signal() }
                var byte: UInt8 = 0
                _ = read(fd, &byte, 1)
                _ = write(peer, "x", 1)
                return .timedOut
            }

            func sendAll(
                _ bytes: [UInt8], until deadline: ContinuousClock.Instant?, stop: HTTPStopSignal
            ) -> HTTPSocket.SendOutcome { .sent }

            func lingeringShutdown(until deadline: ContinuousClock.Instant, stop: HTTPStopSignal, maxDiscard: Int) {}
        }

        static func run(_ stream: RecordsWithoutRequests, stop: HTTPStopSignal, idleTimeout: Duration) {
            let configuration = HTTPTestSupport.configuration(idleTimeout: idleTimeout, requestTimeout: .seconds(1))
            let engine = HTTPServerEngine(configuration: configuration) { _ in .respond(HTTPResponse(status: 200)) }
            var connection = HTTPConnection(
                engine: engine, stop: stop, peer: HTTPPeerAddress(host: "127.0.0.1", port: 1),
                slot: HTTPConnectionSlot(fd: stream.fd))
            connection.run(on: stream)
        }

        /// A read that must write first is not idle: the wait goes on for room, within a
        /// request's time, and ends the connection there.
        @Test func aReadThatMustWriteFirstIsNotIdle() throws {
            let stop = try HTTPStopSignal()
            let stream = try RecordsWithoutRequests(stop: stop, isWaitingToWrite: true, readsBeforeStop: 1_000)
            Self.run(stream, stop: stop, idleTimeout: .seconds(3))
            // The idle probe, then one wait for room within a request's time; it ends the connection.
            #expect(stream.reads.withLock { $0 } == 2)
        }

        /// Records that carry no request (KeyUpdates, which libssl reads and answers) do not keep
        /// a connection idle for good: it is closed at its idle deadline.
        @Test func recordsWithoutARequestDoNotKeepAConnectionIdleForGood() throws {
            let stop = try HTTPStopSignal()
            let stream = try RecordsWithoutRequests(stop: stop, isWaitingToWrite: false, readsBeforeStop: 1_000_000)
            Self.run(stream, stop: stop, idleTimeout: .milliseconds(50))
            #expect(!stop.isSignalled, "the connection ended at its idle deadline, not at the test's stop")
        }
    }
}

import FetchChannelTestSupport
import Foundation
import Glibc
import Testing

@testable import FetchChannelEmulator

/// The software TPM's helper sockets: close-on-exec from their creation, and a wait for swtpm to
/// listen that pauses between attempts. Before, the sockets were inherited by any process spawned
/// meanwhile, and the wait spun on sched_yield for up to 20 s per port.
@Suite(.dedicatedThread) struct SoftwareTPMSocketTests {
    @Test func helperSocketsAreCloseOnExec() throws {
        for nonBlocking in [false, true] {
            let fd = SoftwareTPM.tcpSocket(nonBlocking: nonBlocking)
            try #require(fd >= 0)
            defer { close(fd) }
            #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0, "nonBlocking: \(nonBlocking)")
            #expect((fcntl(fd, F_GETFL) & O_NONBLOCK != 0) == nonBlocking)
        }
    }

    /// A time that moves 1 ms at each reading and by each pause: a wait that does not pause reads
    /// it thousands of times before its deadline, one that backs off a few dozen.
    final class SteppingTime {
        var now = ContinuousClock.now
        var reads = 0
        var pauses: [Duration] = []

        func read() -> ContinuousClock.Instant {
            reads += 1
            now += .milliseconds(1)
            return now
        }

        func pause(_ duration: Duration) {
            pauses.append(duration)
            now += duration
        }
    }

    @Test func theWaitForAListenerBacksOffBetweenRefusedAttempts() throws {
        let port = try #require(SoftwareTPM.refusedPort())
        let time = SteppingTime()
        let deadline = time.now + .seconds(2)
        let accepted = SoftwareTPM.waitUntilAccepting(
            port: port, until: deadline, isRunning: { true }, now: time.read, pause: time.pause)
        #expect(!accepted)
        // About 45 attempts of two readings each: 1, 2, 4 … 32 ms, then 50 ms apart.
        #expect(time.reads <= 150, "\(time.reads) readings of the clock in 2 s")
        #expect((30...60).contains(time.pauses.count), "\(time.pauses.count) pauses in 2 s")
        #expect(time.pauses.allSatisfy { $0 >= .milliseconds(1) && $0 <= .milliseconds(50) })
    }

    @Test func theWaitEndsAtOnceForAListenerOrAnEndedProcess() throws {
        let listener = SoftwareTPM.tcpSocket()
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        try #require(bound && listen(listener, 4) == 0)
        let port = UInt16(bigEndian: address.sin_port)

        let time = SteppingTime()
        let deadline = time.now + .seconds(2)
        #expect(
            SoftwareTPM.waitUntilAccepting(
                port: port, until: deadline, isRunning: { true }, now: time.read, pause: time.pause))
        #expect(
            !SoftwareTPM.waitUntilAccepting(
                port: port, until: deadline, isRunning: { false }, now: time.read, pause: time.pause))
        #expect(time.pauses.isEmpty)
    }
}

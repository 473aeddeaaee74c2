import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// swtpm is started with no signal blocked, whatever the thread that starts it blocks.
@Suite(.dedicatedThread) struct SoftwareTPMSignalMaskTests {
    /// The signals blocked in process `pid` (`SigBlk` of /proc/PID/status), nil if unreadable.
    static func blockedSignals(of pid: Int32) -> UInt64? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") })
        else { return nil }
        return UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16)
    }

    /// Dispatch's threads block every signal, and a child starts with its spawning thread's mask:
    /// swtpm started from one ignored Ctrl-C and `kill`, and outlived an interrupted demo.
    @Test func swtpmStartsWithSIGINTAndSIGTERMUnblocked() async throws {
        guard SoftwareTPM.available(for: "the software TPM's signal mask") else { return }
        let (blocked, callerMaskKept) = try await onOwnThread { () throws -> (UInt64?, Bool) in
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGINT)
            sigaddset(&signals, SIGTERM)
            var previous = sigset_t()
            #expect(pthread_sigmask(SIG_BLOCK, &signals, &previous) == 0)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            var now = sigset_t()
            pthread_sigmask(SIG_SETMASK, nil, &now)
            return (Self.blockedSignals(of: tpm.processIdentifier), sigismember(&now, SIGTERM) == 1)
        }
        let mask = try #require(blocked, "/proc/PID/status of swtpm was not readable")
        #expect(mask & (1 << (SIGINT - 1)) == 0, "SIGINT blocked in swtpm: \(String(mask, radix: 16))")
        #expect(mask & (1 << (SIGTERM - 1)) == 0, "SIGTERM blocked in swtpm: \(String(mask, radix: 16))")
        #expect(callerMaskKept, "the starting thread's own mask is as it was")
    }
}

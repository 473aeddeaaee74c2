import Glibc
import DeviceSigning
import Foundation
import Testing

/// A software TPM (`swtpm socket --tpm2`) for one test: free loopback ports, a fresh state
/// directory in the test's own temporary directory, stopped (and waited for) by the test.
///
/// An empty state directory is enough with `--flags not-need-init,startup-clear`: the TPM is
/// manufactured on first start (no `swtpm_setup`, which only adds an EK and certificates that
/// nothing here uses). The tss2 swtpm transport talks to the control channel on the server port
/// plus one, so the two ports are consecutive.
final class SoftwareTPM: @unchecked Sendable {
    // @unchecked: `process` is only started in init and stopped under `stopLock`.
    let port: UInt16
    let directory: URL
    private let process: Process
    private let stopLock = NSLock()

    /// The TCTI that reaches this TPM.
    var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    func configuration(timeout: Duration = .seconds(20)) -> TPMConfiguration {
        TPMConfiguration(tcti: tcti, timeout: timeout)
    }

    /// `swtpm` from PATH, or nil.
    static let executable: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("swtpm") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// Whether swtpm and OpenSSL's tpm2 provider are installed. When not, says loudly that `what`
    /// was skipped; under `CI=true` their absence is a test failure.
    static func available(for what: String) -> Bool {
        var missing: [String] = []
        if executable == nil { missing.append("swtpm (Debian swtpm)") }
        if !TPMConfiguration.isProviderInstalled { missing.append("OpenSSL's tpm2 provider (Debian tpm2-openssl)") }
        guard !missing.isEmpty else { return true }
        let text = "\(what): \(missing.joined(separator: " and ")) not installed"
        if isCI {
            Issue.record("\(text), and CI=true: install swtpm swtpm-tools tpm2-openssl.")
        } else {
            print("⚠️  SKIPPED: \(text). These TPM checks did NOT run.")
        }
        return false
    }

    /// Starts swtpm; throws when it cannot be started on any of a few port pairs.
    init() throws {
        guard let executable = Self.executable else { throw HarnessError("swtpm is not installed") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("swtpm-\(UUID().uuidString)")
        let state = directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        var lastProblem = "no free port pair"
        // Another program can take a port between the check and swtpm's bind: a few fresh pairs.
        for _ in 0..<8 {
            guard let port = Self.freePortPair() else { continue }
            let process = Process()
            process.executableURL = executable
            process.arguments = [
                "socket", "--tpm2",
                "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1",
                "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1",
                "--tpmstate", "dir=\(state.path)",
                "--flags", "not-need-init,startup-clear",
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if Self.waitUntilAccepting(port: port, process: process),
               Self.waitUntilAccepting(port: port + 1, process: process) {
                self.port = port
                self.process = process
                return
            }
            process.terminate()
            process.waitUntilExit()
            lastProblem = "swtpm did not start listening on 127.0.0.1:\(port) "
                + "(exit status \(process.terminationStatus))"
        }
        try? FileManager.default.removeItem(at: directory)
        throw HarnessError(lastProblem)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops swtpm (SIGKILL, which also ends a paused one) and waits for its exit.
    func stop() {
        stopLock.lock()
        defer { stopLock.unlock() }
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Pauses swtpm (SIGSTOP): it keeps accepting connections (the kernel queues them) but never
    /// answers, like a TPM that hangs.
    func pause() {
        kill(process.processIdentifier, SIGSTOP)
    }

    /// A loopback port nothing listens on (bound, read back and closed): connecting is refused.
    static func refusedPort() -> UInt16 {
        guard let (fd, port) = bindLoopback(port: 0) else { return 9 }  // discard: nothing listens there either
        close(fd)
        return port
    }

    /// A port P such that P and P + 1 are both free on 127.0.0.1 right now.
    private static func freePortPair() -> UInt16? {
        for _ in 0..<16 {
            guard let (fd, port) = bindLoopback(port: 0) else { return nil }
            defer { close(fd) }
            guard port < UInt16.max, let (next, _) = bindLoopback(port: port + 1) else { continue }
            close(next)
            return port
        }
        return nil
    }

    private static func bindLoopback(port: UInt16) -> (Int32, UInt16)? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = loopback(port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, named == 0 else {
            close(fd)
            return nil
        }
        return (fd, UInt16(bigEndian: actual.sin_port))
    }

    /// Connects until swtpm accepts, as long as it runs, within 20 s (no sleeping: it starts
    /// listening within milliseconds; each failed attempt yields the CPU).
    private static func waitUntilAccepting(port: UInt16, process: Process) -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while process.isRunning && ContinuousClock.now < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return false }
            var address = loopback(port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            close(fd)
            if connected == 0 { return true }
            sched_yield()
        }
        return false
    }

    private static func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    struct HarnessError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

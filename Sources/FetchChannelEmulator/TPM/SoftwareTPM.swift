import DeviceSigning
import Foundation
import Glibc

/// A software TPM 2.0 (`swtpm socket --tpm2`, Debian `swtpm`) on free loopback ports with a fresh
/// state directory: what the tests, the `tpm-sign` benchmark and the demo run TPM-bound keys
/// against, the way the reference backend stands in for the real one.
///
/// An empty state directory is enough with `--flags not-need-init,startup-clear`: the TPM is
/// manufactured on first start (`swtpm_setup` only adds an EK and certificates, which nothing here
/// uses). tss2's swtpm transport reaches the control channel at the server port plus one, so the
/// two ports are consecutive. Whoever starts it stops it; `stop()` waits for the exit. A SIGINT,
/// SIGTERM or SIGHUP that a command catches to clean up (``TerminationCleanup``) stops it and
/// removes its directory too: both are registered there as they are made.
package final class SoftwareTPM: Sendable {
    package let port: UInt16
    /// The directory of this TPM's state (and a place for the caller's own files); removed when
    /// the object goes away.
    package let directory: URL
    private let child: Child
    private let childRegistration: TerminationCleanup.Registration
    private let directoryRegistration: TerminationCleanup.Registration

    /// The TCTI that reaches this TPM.
    package var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    package func configuration(timeout: Duration = .seconds(20)) -> TPMConfiguration {
        TPMConfiguration(tcti: tcti, timeout: timeout)
    }

    /// `swtpm` from PATH, or nil.
    package static let executable: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("swtpm") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// What is missing to run a software TPM with TPM keys ("swtpm (Debian swtpm)", …), or nil
    /// when everything is installed.
    package static var missingPrerequisites: String? {
        var missing: [String] = []
        if executable == nil { missing.append("swtpm (Debian swtpm)") }
        if !TPMConfiguration.isProviderInstalled { missing.append("OpenSSL's tpm2 provider (Debian tpm2-openssl)") }
        return missing.isEmpty ? nil : missing.joined(separator: " and ") + " not installed"
    }

    /// Starts swtpm in a new directory under `parent` (default: the temporary directory) and
    /// returns once it accepts connections. Throws when it cannot be started on a few port pairs.
    package init(in parent: URL = FileManager.default.temporaryDirectory) throws {
        guard let executable = Self.executable else {
            throw StartFailure(code: .notInstalled, reason: "swtpm is not installed")
        }
        let directory = parent.appendingPathComponent("swtpm-\(UUID().uuidString)")
        let state = directory.appendingPathComponent("state")
        // Made and registered in one step, as swtpm is below: a caught signal undoes both.
        let (_, directoryRegistration) = try TerminationCleanup.register(
            { try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true) },
            undo: { _ in TerminationCleanup.removeDirectory(atPath: directory.path) })
        var lastProblem = "no free pair of loopback ports"
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
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let child = Child(process)
            let registration: TerminationCleanup.Registration
            do {
                (_, registration) = try TerminationCleanup.register(
                    { try Self.runWithNoSignalBlocked(process) }, undo: { _ in child.stop() })
            } catch {
                directoryRegistration.undo()
                throw error
            }
            // One deadline for both ports: swtpm listens on both within milliseconds of starting.
            let deadline = ContinuousClock.now + .seconds(20)
            if Self.waitUntilAccepting(port: port, until: deadline, isRunning: { process.isRunning }),
                Self.waitUntilAccepting(port: port + 1, until: deadline, isRunning: { process.isRunning })
            {
                self.port = port
                self.directory = directory
                self.child = child
                childRegistration = registration
                self.directoryRegistration = directoryRegistration
                return
            }
            registration.undo()  // SIGKILL, and the wait for its exit
            lastProblem =
                "swtpm did not start listening on 127.0.0.1:\(port) "
                + "(exit status \(process.terminationStatus))"
        }
        directoryRegistration.undo()
        throw StartFailure(code: .didNotStart, reason: lastProblem)
    }

    /// swtpm's process id.
    package var processIdentifier: Int32 { child.process.processIdentifier }

    /// Runs `process` with no signal blocked in it. A child starts with the signal mask of the
    /// thread that spawns it, and Dispatch's threads block every signal: swtpm started from one
    /// ignored Ctrl-C and `kill`, and outlived an interrupted demo or bench. The spawning thread's
    /// mask is opened for the spawn only; a signal for the process that arrives in that moment
    /// may be taken on this thread.
    private static func runWithNoSignalBlocked(_ process: Process) throws {
        var none = sigset_t()
        sigemptyset(&none)
        var previous = sigset_t()
        let opened = pthread_sigmask(SIG_SETMASK, &none, &previous) == 0
        defer { if opened { pthread_sigmask(SIG_SETMASK, &previous, nil) } }
        try process.run()
    }

    deinit {
        stop()
        directoryRegistration.undo()
    }

    /// Stops swtpm (SIGKILL, which also ends a paused one) and waits for its exit.
    package func stop() {
        childRegistration.undo()
    }

    /// Pauses swtpm (SIGSTOP): the kernel still accepts connections for it, but nothing answers,
    /// as with a TPM that hangs. `stop()` ends it.
    package func pause() {
        send(SIGSTOP)
    }

    /// Lets a paused swtpm go on (SIGCONT): it answers what it was sent meanwhile.
    package func resume() {
        send(SIGCONT)
    }

    /// Resets the TPM as a reboot does (TPM_Init through the control channel, `swtpm_ioctl -i`,
    /// Debian swtpm-tools): every loaded object is gone, and the TPM answers every command with
    /// TPM_RC_INITIALIZE until it is started again (``startUp()``, what firmware does at boot).
    /// False when it could not be done.
    package func reset() -> Bool {
        guard let tool = Self.executable?.deletingLastPathComponent().appendingPathComponent("swtpm_ioctl"),
            FileManager.default.isExecutableFile(atPath: tool.path)
        else { return false }
        let control = Process()
        control.executableURL = tool
        control.arguments = ["-i", "--tcp", "127.0.0.1:\(port + 1)"]
        control.standardInput = FileHandle.nullDevice
        control.standardOutput = FileHandle.nullDevice
        control.standardError = FileHandle.nullDevice
        guard (try? control.run()) != nil else { return false }
        control.waitUntilExit()
        return control.terminationStatus == 0
    }

    /// Sends TPM2_Startup(TPM_SU_CLEAR), as firmware does after a reset. True when it succeeded.
    package func startUp() -> Bool {
        // tag TPM_ST_NO_SESSIONS, size 12, TPM_CC_Startup, TPM_SU_CLEAR.
        command([0x80, 0x01, 0x00, 0x00, 0x00, 0x0C, 0x00, 0x00, 0x01, 0x44, 0x00, 0x00]) == 0
    }

    /// Gives the owner hierarchy (the parent of every key made here) the authorization value
    /// `value` (1 to 32 bytes), as an administrator's `tpm2_changeauth -c owner` does. True when it
    /// succeeded.
    package func setOwnerAuthorization(_ value: [UInt8]) -> Bool {
        guard (1...32).contains(value.count) else { return false }
        let parameters: [UInt8] = [0x00, UInt8(value.count)] + value  // TPM2B_AUTH
        // TPM_RH_OWNER, then one password session (TPM_RS_PW, empty nonce and password).
        let handleAndSession: [UInt8] = [
            0x40, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09, 0x40, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00,
        ]
        let size = 10 + handleAndSession.count + parameters.count
        // tag TPM_ST_SESSIONS, size, TPM_CC_HierarchyChangeAuth.
        let header: [UInt8] = [0x80, 0x02, 0x00, 0x00, 0x00, UInt8(size), 0x00, 0x00, 0x01, 0x29]
        return command(header + handleAndSession + parameters) == 0
    }

    /// Sends one TPM command on a connection of its own and returns the response code, or nil
    /// when the connection was not made within 10 s or no answer came within 10 s more. swtpm
    /// serves one connection at a time: a key's that is still open makes this one wait, and then
    /// fail.
    private func command(_ bytes: [UInt8]) -> UInt32? {
        let fd = Self.tcpSocket(nonBlocking: true)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        guard Self.connect(fd, port: port, until: ContinuousClock.now + .seconds(10)),
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size)) == 0,
            bytes.withUnsafeBytes({ Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count
        else { return nil }
        var answer = [UInt8](repeating: 0, count: 10)  // tag, size, response code
        var received = 0
        while received < answer.count {
            let count = answer.withUnsafeMutableBytes { buffer in
                recv(fd, buffer.baseAddress.map { $0 + received }, buffer.count - received, 0)
            }
            guard count > 0 else { return nil }
            received += count
        }
        return answer[6..<10].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Sends `number` to swtpm while it runs.
    private func send(_ number: Int32) {
        child.send(number)
    }

    /// swtpm's process, signalled only under `lock`, which `stop()` takes too: never a pid that a
    /// stopped (and reaped) swtpm left for another process to take.
    private final class Child: @unchecked Sendable {
        // @unchecked: `process` is started before it is shared, then signalled under `lock`.
        let process: Process
        private let lock = NSLock()

        init(_ process: Process) {
            self.process = process
        }

        /// SIGKILL (which also ends a paused swtpm), and the wait for its exit. Idempotent.
        func stop() {
            lock.lock()
            defer { lock.unlock() }
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        func send(_ number: Int32) {
            lock.lock()
            defer { lock.unlock() }
            guard process.isRunning else { return }
            kill(process.processIdentifier, number)
        }
    }

    /// A loopback port nothing listens on (bound, read back and closed): connecting is refused.
    package static func refusedPort() -> UInt16? {
        guard let (fd, port) = bindLoopback(port: 0) else { return nil }
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
        let fd = tcpSocket()
        guard fd >= 0 else { return nil }
        let bound = loopback.withSocketAddress(port: port) { bind(fd, $0, $1) }
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

    /// An IPv4 TCP socket, close-on-exec from its creation: a process that another thread
    /// spawns meanwhile (swtpm itself, a test's child) must not inherit it. Non-blocking when
    /// asked, for a connect with a deadline (``connect(_:port:until:)``).
    static func tcpSocket(nonBlocking: Bool = false) -> Int32 {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        return socket(AF_INET, type, 0)
    }

    /// Connects the non-blocking `fd` to 127.0.0.1:`port` by `deadline`, and makes it blocking
    /// again. False when refused, failed or not connected in time: a listener whose queue is full
    /// (a paused swtpm's) would otherwise hold a blocking connect for minutes.
    static func connect(_ fd: Int32, port: UInt16, until deadline: ContinuousClock.Instant) -> Bool {
        if loopback.withSocketAddress(port: port, { Glibc.connect(fd, $0, $1) }) != 0 {
            guard errno == EINPROGRESS else { return false }
            var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            while true {
                let ready = poll(&descriptor, 1, HTTPPoll.millisecondsUntil(deadline))
                if ready > 0 { break }
                if ready == 0 && ContinuousClock.now >= deadline { return false }
                if ready < 0 && errno != EINTR { return false }
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error == 0 else { return false }
        }
        let flags = fcntl(fd, F_GETFL)
        return flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0
    }

    /// Connects until something accepts on `port`, as long as `isRunning`, until `deadline`. swtpm
    /// listens within milliseconds of starting; between refused attempts the thread pauses, 1 ms
    /// at first and twice as long each time up to 50 ms, instead of spinning on the CPU.
    /// `now` and `pause` are the clock's and the wait's (a test's own).
    static func waitUntilAccepting(
        port: UInt16, until deadline: ContinuousClock.Instant, isRunning: () -> Bool,
        now: () -> ContinuousClock.Instant = { ContinuousClock.now },
        pause: (Duration) -> Void = { duration in
            let (seconds, attoseconds) = duration.components
            Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
        }
    ) -> Bool {
        var delay = Duration.milliseconds(1)
        while isRunning() && now() < deadline {
            let fd = tcpSocket(nonBlocking: true)
            guard fd >= 0 else { return false }
            let connected = connect(fd, port: port, until: ContinuousClock.now + .seconds(1))
            close(fd)
            if connected { return true }
            let left = now().duration(to: deadline)
            guard left > .zero else { break }
            pause(min(delay, left))
            delay = min(delay * 2, .milliseconds(50))
        }
        return false
    }

    /// 127.0.0.1: swtpm binds there, and nothing else is tried.
    private static let loopback = HTTPIPAddress.v4([127, 0, 0, 1])

    /// Why swtpm could not be started. Equal when the codes are.
    package struct StartFailure: CodedError {
        package struct Code: ErrorCode {
            package let rawValue: String

            /// No swtpm executable on the usual paths.
            package static let notInstalled = Code(rawValue: "notInstalled")
            /// swtpm did not accept connections on any of the port pairs tried.
            package static let didNotStart = Code(rawValue: "didNotStart")
        }

        package let code: Code
        package let reason: String
    }
}

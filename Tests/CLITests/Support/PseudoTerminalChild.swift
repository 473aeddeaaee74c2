import FetchChannelTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if os(Linux)
    /// `fetchchannel` with a pseudo-terminal as its controlling terminal and its three standard
    /// streams, started by posix_spawn in a session of its own (POSIX_SPAWN_SETSID; opening the
    /// terminal's device then makes it the controlling one). The test types on the master side,
    /// reads what the child wrote, reads the terminal's settings, and signals the child.
    final class PseudoTerminalChild {
        let pid: pid_t
        private let master: Int32
        /// The terminal's device, opened here too (O_NOCTTY) to read its settings.
        private let terminal: Int32
        private var transcript: [UInt8] = []
        private var exitStatus: Int32?

        /// TIOCSPTLCK and TIOCGPTN (`_IOW('T', 0x31, int)`, `_IOR('T', 0x30, unsigned int)`).
        private static let setLock: UInt = 0x4004_5431
        private static let getNumber: UInt = 0x8004_5430
        /// POSIX_SPAWN_SETSID (glibc's spawn.h defines it only for _GNU_SOURCE).
        private static let spawnSetSID: Int16 = 0x80

        /// `fetchchannel arguments…`, or `executable arguments…` (a shell that starts it).
        init(_ arguments: [String], environment: [String: String], executable: String = CLIProcess.binary.path) throws {
            // posix_openpt, unlockpt and ptsname as pts(4) describes them (Swift's Glibc module does
            // not offer them): a new master from /dev/ptmx, unlocked, and its number.
            master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
            var unlock: Int32 = 0
            var number: UInt32 = 0
            guard master >= 0, ioctl(master, Self.setLock, &unlock) == 0, ioctl(master, Self.getNumber, &number) == 0
            else {
                let problem = String(cString: strerror(errno))
                if master >= 0 { close(master) }
                throw PseudoTerminalError("no pseudo-terminal: \(problem)")
            }
            let path = "/dev/pts/\(number)"
            terminal = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
            guard terminal >= 0 else {
                close(master)
                throw PseudoTerminalError("cannot open \(path): \(String(cString: strerror(errno)))")
            }
            _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)

            var actions = posix_spawn_file_actions_t()
            var attributes = posix_spawnattr_t()
            posix_spawn_file_actions_init(&actions)
            posix_spawnattr_init(&attributes)
            defer {
                posix_spawn_file_actions_destroy(&actions)
                posix_spawnattr_destroy(&attributes)
            }
            // Nothing of this thread's signal state is inherited: the test runner's threads block
            // most signals, and a runner started by `nohup` or `&` ignores some.
            var empty = sigset_t()
            sigemptyset(&empty)
            var defaults = sigset_t()
            sigemptyset(&defaults)
            for signal in [SIGALRM, SIGHUP, SIGINT, SIGPIPE, SIGQUIT, SIGTERM, SIGTSTP, SIGTTIN, SIGTTOU] {
                sigaddset(&defaults, signal)
            }
            posix_spawnattr_setsigmask(&attributes, &empty)
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            posix_spawnattr_setflags(
                &attributes, Self.spawnSetSID | Int16(POSIX_SPAWN_SETSIGMASK) | Int16(POSIX_SPAWN_SETSIGDEF))
            // After setsid: the first terminal a session leader opens becomes its controlling one.
            posix_spawn_file_actions_addopen(&actions, 0, path, O_RDWR, 0)
            posix_spawn_file_actions_adddup2(&actions, 0, 1)
            posix_spawn_file_actions_adddup2(&actions, 0, 2)

            switch spawnProcess(
                executable, arguments, environment: environment, actions: &actions, attributes: &attributes)
            {
            case .success(let child):
                pid = child
            case .failure(let error):
                close(terminal)
                close(master)
                throw PseudoTerminalError("posix_spawn failed: \(error)")
            }
        }

        deinit {
            if exitStatus == nil {
                kill(pid, SIGKILL)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
            }
            close(terminal)
            close(master)
        }

        /// Everything the child wrote to the terminal so far.
        var output: String {
            drain()
            return String(decoding: transcript, as: UTF8.self)
        }

        /// Whether the terminal echoes what is typed (ECHO in its local modes).
        var echoIsOn: Bool {
            var settings = termios()
            guard tcgetattr(terminal, &settings) == 0 else {
                Issue.record("cannot read the terminal's settings: \(String(cString: strerror(errno)))")
                return false
            }
            return settings.c_lflag & tcflag_t(ECHO) != 0
        }

        /// Switches the terminal's echo on or off, as a shell does when its job stops.
        func setEcho(_ on: Bool) {
            var settings = termios()
            guard tcgetattr(terminal, &settings) == 0 else {
                Issue.record("cannot read the terminal's settings: \(String(cString: strerror(errno)))")
                return
            }
            if on { settings.c_lflag |= tcflag_t(ECHO) } else { settings.c_lflag &= ~tcflag_t(ECHO) }
            if tcsetattr(terminal, TCSANOW, &settings) != 0 {
                Issue.record("cannot set the terminal's settings: \(String(cString: strerror(errno)))")
            }
        }

        /// Types `text` on the terminal.
        func type(_ text: String) {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
        }

        /// Polls until `condition` holds or the child exits, at most 20 s (stretched in the
        /// sanitizer runs). Returns whether it holds.
        @discardableResult
        func waitUntil(_ condition: (PseudoTerminalChild) -> Bool) async -> Bool {
            let deadline = Date().addingTimeInterval(20 * Double(LooseTimeBounds.scale))
            while !condition(self), !hasExited, Date() < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            return condition(self)
        }

        /// How often `text` appears in what the child wrote.
        func occurrences(of text: String) -> Int {
            output.components(separatedBy: text).count - 1
        }

        /// How the child ended: `(exitCode, nil)` or `(nil, signal)`; kills it after 20 s (stretched).
        func waitForExit() async -> (code: Int32?, signal: Int32?) {
            await waitUntil { $0.hasExited }
            if !hasExited {
                kill(pid, SIGKILL)
                Issue.record("the child on the pseudo-terminal did not exit; killed")
                var status: Int32 = 0
                waitpid(pid, &status, 0)
                exitStatus = status
            }
            let status = exitStatus ?? 0
            drain()
            let signal = status & 0x7f
            return signal == 0 ? ((status >> 8) & 0xff, nil) : (nil, signal)
        }

        private var hasExited: Bool {
            if exitStatus != nil { return true }
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == pid else { return false }
            exitStatus = status
            return true
        }

        private func drain() {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(master, &buffer, buffer.count)
                guard count > 0 else { return }
                transcript += buffer.prefix(count)
            }
        }
    }

    struct PseudoTerminalError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
#endif

import FetchChannelTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if os(Linux)
    /// A program started by posix_spawn for a test to signal: SIGINT, SIGTERM and SIGHUP at their
    /// default action and no signal blocked, whatever the test runner ignores or blocks (a runner
    /// started by `nohup` or `&` ignores some, its threads block most, and Foundation's `Process`
    /// passes both on); standard input from /dev/null, standard output and error into files.
    final class SignalledChild {
        /// How a child ended.
        enum Ending: Equatable, CustomStringConvertible {
            case exited(Int32)
            case signalled(Int32)
            /// Still running at the deadline: killed (SIGKILL).
            case timedOut

            var description: String {
                switch self {
                case .exited(let status): "exited \(status)"
                case .signalled(let number): "killed by signal \(number)"
                case .timedOut: "still running at the deadline"
                }
            }
        }

        let pid: pid_t
        let outputPath: String
        let errorPath: String
        private var ending: Ending?

        init(_ executable: String, _ arguments: [String], environment: [String: String], outputIn directory: URL)
            throws
        {
            outputPath = directory.appendingPathComponent("child-stdout").path
            errorPath = directory.appendingPathComponent("child-stderr").path
            var actions = posix_spawn_file_actions_t()
            var attributes = posix_spawnattr_t()
            guard posix_spawn_file_actions_init(&actions) == 0 else { throw SpawnError("no file actions") }
            defer { posix_spawn_file_actions_destroy(&actions) }
            guard posix_spawnattr_init(&attributes) == 0 else { throw SpawnError("no spawn attributes") }
            defer { posix_spawnattr_destroy(&attributes) }
            var empty = sigset_t()
            var defaults = sigset_t()
            guard sigemptyset(&empty) == 0, sigemptyset(&defaults) == 0,
                [SIGINT, SIGTERM, SIGHUP].allSatisfy({ sigaddset(&defaults, $0) == 0 }),
                posix_spawnattr_setsigmask(&attributes, &empty) == 0,
                posix_spawnattr_setsigdefault(&attributes, &defaults) == 0,
                posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) == 0,
                posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) == 0,
                posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600) == 0,
                posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600) == 0
            else { throw SpawnError("cannot prepare the spawn: \(String(cString: strerror(errno)))") }
            switch spawnProcess(
                executable, arguments, environment: environment, actions: &actions, attributes: &attributes)
            {
            case .success(let child): pid = child
            case .failure(let error): throw SpawnError("posix_spawn \(executable): \(error)")
            }
        }

        deinit {
            if ending == nil {
                kill(pid, SIGKILL)
                var status: Int32 = 0
                _ = waitpid(pid, &status, 0)
            }
        }

        /// What the child wrote to standard output and error so far.
        var output: String {
            [outputPath, errorPath].map { (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "" }
                .joined(separator: "\n--- stderr:\n")
        }

        /// Polls until `probe` finds something, the child exits or 20 s pass (stretched in the
        /// sanitizer runs, ``LooseTimeBounds``): the child makes what is probed for when it gets
        /// there; nothing here waits for time to pass.
        func waitFor<T>(_ probe: () -> T?) async throws -> T? {
            let deadline = ContinuousClock.now + LooseTimeBounds.scaled(.seconds(20))
            while ContinuousClock.now < deadline {
                if let found = probe() { return found }
                guard ending == nil, !reap(blocking: false) else { return probe() }
                try await Task.sleep(for: .milliseconds(20))
            }
            return nil
        }

        /// Waits for the child's end, up to 20 s (stretched as for ``waitFor(_:)``), polling its
        /// status; a child still running then is killed and reported as timed out.
        func waitForEnd() async -> Ending {
            let deadline = ContinuousClock.now + LooseTimeBounds.scaled(.seconds(20))
            while ending == nil && ContinuousClock.now < deadline {
                if reap(blocking: false) { break }
                try? await Task.sleep(for: .milliseconds(20))
            }
            if let ending { return ending }
            kill(pid, SIGKILL)
            _ = reap(blocking: true)
            ending = .timedOut
            return .timedOut
        }

        /// Collects the child's status if it has ended; true when it has.
        private func reap(blocking: Bool) -> Bool {
            if ending != nil { return true }
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            guard reaped == pid else { return false }
            // The status word: the terminating signal in the low 7 bits, else the exit status above.
            let signal = status & 0x7f
            ending = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
            return true
        }
    }

    struct SpawnError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
#endif

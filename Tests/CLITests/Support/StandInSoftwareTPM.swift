import Foundation

#if canImport(Glibc)
    import Glibc
#endif

#if os(Linux)
    /// A `swtpm` that starts and never listens, put first on a child's PATH. The demo's TPM step
    /// (its last) waits for it to listen, up to 20 s: so a test knows when the demo is there,
    /// holding its key store, a swtpm state directory and a child, and it stays there while the
    /// test signals it. The stand-in writes its pid to a file, then becomes `sleep 120` under the
    /// same pid, which ends by itself should a test fail to stop it.
    struct StandInSoftwareTPM {
        let directory: URL
        private let pidFile: URL

        init(in sandbox: CLISandbox) throws {
            directory = sandbox.file("bin")
            pidFile = sandbox.file("swtpm.pid")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let script = """
                #!/bin/sh
                echo $$ > '\(pidFile.path).new' && mv '\(pidFile.path).new' '\(pidFile.path)'
                exec sleep 120

                """
            let executable = directory.appendingPathComponent("swtpm")
            try Data(script.utf8).write(to: executable)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: executable.path)
        }

        /// A PATH that finds the stand-in first, then what the tests' own PATH finds.
        var searchPath: String {
            directory.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        }

        /// The stand-in's pid, once it has started.
        var pid: pid_t? {
            (try? String(contentsOf: pidFile, encoding: .utf8)).flatMap {
                pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }

        /// Kills the stand-in if it is still there (a test that failed).
        func stopIfLeft() {
            guard let pid, ProcessTable.commandLine(of: pid)?.hasPrefix("sleep 120") == true else { return }
            kill(pid, SIGKILL)
        }
    }
#endif

import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if os(Linux)
    extension CLISubprocessTests {
        /// `demo`, `bench` and `fetchchannel-bench` ended by Ctrl-C, `kill` or a closed terminal
        /// leave nothing behind: their swtpm is stopped and reaped, the temporary directories they
        /// made are gone, and the process dies of the signal, as the shell expects (128+n). A
        /// signal the process was started ignoring stays ignored (nohup).
        @Suite struct TerminationCleanupProcessTests {
            /// The demo, held at its TPM step by a stand-in swtpm that never listens: by then it
            /// has made its key store and the TPM's state directory, and started the stand-in.
            @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
            func demoEndedByASignalLeavesNothingBehind(_ signal: Int32) async throws {
                guard SoftwareTPM.available(for: "the demo ended by a signal") else { return }
                let sandbox = try CLISandbox()
                defer { sandbox.remove() }
                let standIn = try StandInSoftwareTPM(in: sandbox)
                defer { standIn.stopIfLeft() }
                let child = try SignalledChild(
                    CLIProcess.binary.path, ["demo"],
                    environment: sandbox.environment(passphrase: nil, extra: ["PATH": standIn.searchPath]),
                    outputIn: sandbox.root)
                let tpm = try #require(
                    await child.waitFor { standIn.pid }, "the demo never started its swtpm: \(child.output)")
                #expect(
                    Set(try temporaryEntries(sandbox).map { String($0.prefix(6)) }) == ["fetchc", "swtpm-"],
                    "its key store and the TPM's directory are there before the signal")

                kill(child.pid, signal)
                let ending = await child.waitForEnd()
                #expect(ending == .signalled(signal), "\(ending): \(child.output)")
                #expect(try temporaryEntries(sandbox).isEmpty, "left in its temporary directory")
                #expect(ProcessTable.isGone(tpm), "its swtpm \(tpm) is still there")
            }

            /// Started ignoring SIGHUP, as `nohup` starts a command, the demo keeps ignoring it:
            /// SIGHUP changes nothing, and SIGTERM then ends it, cleaned up.
            @Test func demoStartedIgnoringSIGHUPKeepsIgnoringIt() async throws {
                guard SoftwareTPM.available(for: "the demo started ignoring SIGHUP") else { return }
                let sandbox = try CLISandbox()
                defer { sandbox.remove() }
                let standIn = try StandInSoftwareTPM(in: sandbox)
                defer { standIn.stopIfLeft() }
                let child = try SignalledChild(
                    "/bin/sh", ["-c", "trap '' HUP; exec \"$0\" demo", CLIProcess.binary.path],
                    environment: sandbox.environment(passphrase: nil, extra: ["PATH": standIn.searchPath]),
                    outputIn: sandbox.root)
                let tpm = try #require(
                    await child.waitFor { standIn.pid }, "the demo never started its swtpm: \(child.output)")
                #expect(ProcessTable.disposition(of: SIGHUP, in: child.pid) == .ignored)
                #expect(ProcessTable.disposition(of: SIGTERM, in: child.pid) == .caught)
                #expect(ProcessTable.disposition(of: SIGINT, in: child.pid) == .caught)

                kill(child.pid, SIGHUP)
                kill(child.pid, SIGTERM)
                let ending = await child.waitForEnd()
                #expect(ending == .signalled(SIGTERM), "\(ending): \(child.output)")
                #expect(try temporaryEntries(sandbox).isEmpty, "left in its temporary directory")
                #expect(ProcessTable.isGone(tpm), "its swtpm \(tpm) is still there")
            }

            /// The tpm-sign row with a real swtpm, signalled while it signs (the row first measures
            /// software signing for a quarter of --seconds, then starts swtpm for half of it).
            @Test(arguments: [("fetchchannel", SIGTERM), ("fetchchannel-bench", SIGINT)])
            func benchEndedByASignalStopsItsSoftwareTPM(_ program: String, _ signal: Int32) async throws {
                guard SoftwareTPM.available(for: "\(program) ended by a signal") else { return }
                let sandbox = try CLISandbox()
                defer { sandbox.remove() }
                let executable = CLIProcess.binary.deletingLastPathComponent().appendingPathComponent(program).path
                try #require(
                    FileManager.default.isExecutableFile(atPath: executable), "\(program) is built beside the tests")
                let arguments = (program == "fetchchannel" ? ["bench"] : []) + ["--rows", "tpm-sign", "--seconds", "8"]
                let child = try SignalledChild(
                    executable, arguments, environment: sandbox.environment(passphrase: nil), outputIn: sandbox.root)
                // Its swtpm is the process whose command line names the sandbox (its state directory).
                let swtpm = try #require(
                    await child.waitFor { ProcessTable.processes(naming: sandbox.temporaryDirectory.path).first },
                    "the bench never started swtpm: \(child.output)")
                defer { if !ProcessTable.isGone(swtpm) { kill(swtpm, SIGKILL) } }
                #expect(ProcessTable.commandLine(of: swtpm)?.contains("swtpm socket") == true)

                kill(child.pid, signal)
                let ending = await child.waitForEnd()
                #expect(ending == .signalled(signal), "\(ending): \(child.output)")
                #expect(try temporaryEntries(sandbox).isEmpty, "left in its temporary directory")
                #expect(ProcessTable.isGone(swtpm), "its swtpm \(swtpm) is still there")
                #expect(ProcessTable.processes(naming: sandbox.root.path).isEmpty, "a process still names the sandbox")
            }

            /// What the children left in their TMPDIR.
            private func temporaryEntries(_ sandbox: CLISandbox) throws -> [String] {
                try FileManager.default.contentsOfDirectory(atPath: sandbox.temporaryDirectory.path).sorted()
            }
        }
    }
#endif

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

#if os(Linux)
    extension CLIOfflineProcessTests {
        /// The passphrase prompt on a real (pseudo-)terminal: echo is off while it waits, and no
        /// signal leaves it off.
        @Suite struct PassphrasePromptTerminalTests {
            static let prompt = "Passphrase to protect"

            /// `key generate` on a terminal, with no passphrase from the environment: it prompts.
            static func startGenerating(in sandbox: CLISandbox) throws -> PseudoTerminalChild {
                try PseudoTerminalChild(
                    ["key", "generate"] + sandbox.storeArguments, environment: sandbox.environment(passphrase: nil))
            }

            /// Waits for the `index`th prompt with echo switched off.
            static func waitForSilentPrompt(_ child: PseudoTerminalChild, _ text: String, index: Int = 1) async {
                let ready = await child.waitUntil { $0.occurrences(of: text) >= index && !$0.echoIsOn }
                #expect(ready, "no prompt \(index) with echo off: \(child.output)")
            }

            @Test func aTypedPassphraseIsNotEchoedAndEchoComesBack() async throws {
                let sandbox = try CLISandbox()
                defer { sandbox.remove() }
                let child = try Self.startGenerating(in: sandbox)
                await Self.waitForSilentPrompt(child, Self.prompt)
                child.type("typed secret 42\n")
                await Self.waitForSilentPrompt(child, "Repeat the passphrase")
                child.type("typed secret 42\n")
                let ended = await child.waitForExit()
                #expect(ended.code == 0, "\(child.output)")
                #expect(child.echoIsOn)
                #expect(!child.output.contains("typed secret"), "\(child.output)")
            }

            /// Without the prompt's handlers, SIGTERM, SIGHUP and SIGQUIT ended the process with
            /// echo off, and SIGINT exited 130 instead of dying of the signal.
            @Test(arguments: [SIGTERM, SIGHUP, SIGINT])
            func aSignalAtThePromptEndsTheProcessWithEchoOn(_ signal: Int32) async throws {
                let sandbox = try CLISandbox()
                defer { sandbox.remove() }
                let child = try Self.startGenerating(in: sandbox)
                await Self.waitForSilentPrompt(child, Self.prompt)
                child.type("half a passphr")
                kill(child.pid, signal)
                let ended = await child.waitForExit()
                #expect(ended.signal == signal, "ended \(ended): \(child.output)")
                #expect(child.echoIsOn, "echo stayed off after signal \(signal)")
                let stored = (try? FileManager.default.contentsOfDirectory(atPath: sandbox.store)) ?? []
                #expect(!stored.contains { $0.hasSuffix(".json") }, "a key was stored: \(stored)")
            }

            /// `key export --output FILE` killed at the passphrase prompt leaves no file: the data
            /// goes to an unnamed file, named only once complete. Before, the empty file made at the
            /// start stayed, and a retry was refused because the name existed.
            @Test func anExportKilledAtThePromptLeavesNoOutputFile() async throws {
                let sandbox = try CLISandbox()
                defer { sandbox.remove() }
                let keyId = try await sandbox.generateKey()
                let path = sandbox.root.appendingPathComponent("exported.pem").path
                let child = try PseudoTerminalChild(
                    ["key", "export", "--private", "--output", path] + sandbox.storeArguments + ["--", keyId],
                    environment: sandbox.environment(passphrase: nil))
                await Self.waitForSilentPrompt(child, "Passphrase to ")
                kill(child.pid, SIGINT)
                let ended = await child.waitForExit()
                #expect(ended.signal == SIGINT, "ended \(ended): \(child.output)")
                #expect(!FileManager.default.fileExists(atPath: path), "the interrupted export left \(path)")
            }

            /// A background job that reaches for the terminal is stopped there by SIGTTOU, with echo
            /// on, as ssh is. Before, the job's prompt thread blocked SIGTTOU (Dispatch's threads
            /// do), so it switched echo off behind the foreground's back and then failed its read
            /// with EIO; and with `stty tostop`, a prompt that retried its write on EINTR spun for
            /// ever.
            @Test(arguments: [false, true])
            func aBackgroundJobIsStoppedAtThePromptWithEchoOn(tostop: Bool) async throws {
                let sandbox = try CLISandbox()
                defer { sandbox.remove() }
                let pidFile = sandbox.file("job.pid")
                // A shell with job control leads the terminal's session and starts the CLI as a
                // background job: a process group of its own whose parent is in the session, so
                // not orphaned, and stop signals stop it. `exec cat` keeps the session's leader.
                let script =
                    (tostop ? "stty tostop; " : "")
                    + "set -m; \"$0\" \"$@\" & echo $! > '\(pidFile.path)'; exec cat > /dev/null"
                let shell = try PseudoTerminalChild(
                    ["-c", script, CLIProcess.binary.path, "key", "generate"] + sandbox.storeArguments,
                    environment: sandbox.environment(passphrase: nil), executable: "/bin/sh")
                var job: pid_t = 0
                defer { if job > 0 { kill(job, SIGKILL) } }
                await shell.waitUntil { _ in
                    let text = (try? String(contentsOf: pidFile, encoding: .utf8)) ?? ""
                    job = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
                    return job > 0
                }
                try #require(job > 0, "the shell did not start the job: \(shell.output)")
                let stopped = await shell.waitUntil { _ in Self.state(of: job) == "T" }
                #expect(stopped, "the job is \(Self.state(of: job) ?? "gone"): \(shell.output)")
                #expect(shell.echoIsOn)
            }

            /// With SIGTTOU ignored (a shell's `trap '' TTOU`) the kernel lets a background job
            /// change the terminal: before, the job switched echo off under the foreground job and
            /// waited there. It is now refused before it touches the terminal.
            @Test func aBackgroundJobThatIgnoresSIGTTOUIsRefused() async throws {
                let sandbox = try CLISandbox()
                defer { sandbox.remove() }
                let script = "trap '' TTOU; set -m; \"$0\" \"$@\" & wait $!; echo \"job exit $?\"; exec cat > /dev/null"
                let shell = try PseudoTerminalChild(
                    ["-c", script, CLIProcess.binary.path, "key", "generate"] + sandbox.storeArguments,
                    environment: sandbox.environment(passphrase: nil), executable: "/bin/sh")
                let ended = await shell.waitUntil { $0.output.contains("job exit") }
                #expect(ended, "\(shell.output)")
                #expect(shell.output.contains("run the command in the foreground"), "\(shell.output)")
                #expect(shell.output.contains("job exit 1"), "\(shell.output)")
                #expect(shell.echoIsOn)
            }

            /// The state letter of `/proc/PID/stat` (R, S, T, …), or nil when the process is gone.
            static func state(of pid: pid_t) -> String? {
                guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")")
                else { return nil }
                return stat[close...].dropFirst(2).split(separator: " ").first.map(String.init)
            }

            /// A stop signal ends the prompt with echo on and asks again when the process goes on.
            /// The child leads a session of its own, so its process group is orphaned and the
            /// kernel discards the stop itself (POSIX); the prompt must still ask again, from the
            /// start, and the half-typed text is forgotten.
            @Test func aStopSignalAsksAgainFromTheStart() async throws {
                let sandbox = try CLISandbox()
                defer { sandbox.remove() }
                let child = try Self.startGenerating(in: sandbox)
                await Self.waitForSilentPrompt(child, Self.prompt)
                child.type("forgotten")
                kill(child.pid, SIGTSTP)
                await Self.answerTheSecondPrompt(child, with: "fresh start")
            }

            /// Waits for the prompt to ask again, types `passphrase` there and at the repeat, and
            /// expects the key made with echo on and the passphrase never shown.
            static func answerTheSecondPrompt(_ child: PseudoTerminalChild, with passphrase: String) async {
                await waitForSilentPrompt(child, prompt, index: 2)
                child.type(passphrase + "\n")
                await waitForSilentPrompt(child, "Repeat the passphrase")
                child.type(passphrase + "\n")
                let ended = await child.waitForExit()
                #expect(ended.code == 0, "\(child.output)")
                #expect(child.echoIsOn)
                #expect(!child.output.contains(passphrase), "echoed: \(child.output)")
            }

            /// SIGSTOP cannot be caught: a prompt stopped so (`kill -STOP`, a debugger) and then
            /// continued found the terminal as the shell had put it back meanwhile, echoing, and
            /// went on reading: the passphrase typed then was shown. It now catches SIGCONT and
            /// asks again from the start with echo off.
            @Test func aPromptStoppedBySIGSTOPAsksAgainWithEchoOffWhenContinued() async throws {
                let sandbox = try CLISandbox()
                defer { sandbox.remove() }
                let child = try Self.startGenerating(in: sandbox)
                await Self.waitForSilentPrompt(child, Self.prompt)
                child.type("forgotten")
                kill(child.pid, SIGSTOP)
                let stopped = await child.waitUntil { Self.state(of: $0.pid) == "T" }
                try #require(stopped, "the child did not stop: \(child.output)")
                child.setEcho(true)  // what the shell does when its foreground job stops
                kill(child.pid, SIGCONT)
                await Self.answerTheSecondPrompt(child, with: "typed after continuing")
            }
        }
    }
#endif

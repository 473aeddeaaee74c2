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
                await Self.waitForSilentPrompt(child, Self.prompt, index: 2)
                child.type("fresh start\n")
                await Self.waitForSilentPrompt(child, "Repeat the passphrase")
                child.type("fresh start\n")
                let ended = await child.waitForExit()
                #expect(ended.code == 0, "\(child.output)")
                #expect(child.echoIsOn)
            }
        }
    }
#endif

import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension CLIOfflineProcessTests {
    /// Security review, item 8: where the CLI puts secrets and how it reads what it is given.
    @Suite struct SecretHandlingProcessTests {
        /// Runs `fetchchannel arguments…` with a pseudo-terminal as its standard streams, through
        /// util-linux `script` (in every Debian system); returns its exit status and what the
        /// terminal received.
        static func runOnATerminal(_ arguments: [String], sandbox: CLISandbox) async throws -> (Int32, String) {
            let quoted = ([CLIProcess.binary.path] + arguments).map {
                "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'"
            }
            let transcript = sandbox.file("terminal-\(UUID().uuidString)")
            _ = FileManager.default.createFile(atPath: transcript.path, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-q", "-e", "-c", quoted.joined(separator: " "), "/dev/null"]
            process.environment = sandbox.environment()
            process.standardInput = FileHandle.nullDevice
            let output = try FileHandle(forWritingTo: transcript)
            process.standardOutput = output
            process.standardError = output
            // Woken by the exit itself, not by polling.
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                process.terminationHandler = { _ in continuation.resume() }
                do {
                    try process.run()
                } catch {
                    process.terminationHandler = nil
                    continuation.resume(throwing: error)
                }
            }
            try? output.close()
            return (process.terminationStatus, (try? String(contentsOf: transcript, encoding: .utf8)) ?? "")
        }

        @Test func anUnencryptedPrivateExportIsNotPrintedToATerminal() async throws {
            try #require(
                FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "util-linux script is missing")
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            for format in ["pem", "jwk"] {
                let (status, terminal) = try await Self.runOnATerminal(
                    ["key", "export", "--private", "--no-encryption", "--format", format]
                        + sandbox.storeArguments + ["--", keyId],
                    sandbox: sandbox)
                #expect(
                    status == 1 && terminal.contains("refusing to print an unencrypted private key to a terminal"),
                    "\(terminal)")
                #expect(!terminal.contains("PRIVATE KEY-----") && !terminal.contains("\"d\""), "\(terminal)")
            }
            // Encrypted, it may be shown.
            let (status, terminal) = try await Self.runOnATerminal(
                ["key", "export", "--private"] + sandbox.storeArguments + ["--", keyId],
                sandbox: sandbox)
            #expect(status == 0 && terminal.contains("ENCRYPTED PRIVATE KEY"), "\(terminal)")
        }

        /// `key export --private --no-encryption --json` writes the key without making a String of
        /// it; its document is still the text `--json` makes of every export: `data` the PEM as a
        /// string, the JWK as an object, the DER in base64, beside encrypted, format, keyId, private.
        @Test(arguments: [("pem", false), ("jwk", false), ("der", false), ("pem", true), ("jwk", true)])
        func anUnencryptedPrivateExportAsJSONHoldsTheExport(format: String, encryptionKey: Bool) async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            let export =
                ["key", "export", "--private", "--no-encryption", "--format", format]
                + (encryptionKey ? ["--encryption"] : []) + sandbox.storeArguments
            let plain = try await sandbox.run(export + ["--", keyId])
            let json = try await sandbox.run(export + ["--json", "--", keyId])
            #expect(plain.status == 0 && json.status == 0, "\(plain.summary) \(json.summary)")
            let data: Any
            switch format {
            case "jwk": data = try JSONSerialization.jsonObject(with: plain.standardOutput)
            case "der": data = plain.standardOutput.base64EncodedString()
            default: data = plain.out
            }
            let document: [String: Any] = [
                "data": data, "encrypted": false, "format": format, "keyId": keyId, "private": true,
            ]
            let expected = try JSONSerialization.data(
                withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
            #expect(json.standardOutput == expected + Data("\n".utf8), "\(json.summary)")
        }

        /// A decrypted plaintext is the sender's to choose: on a terminal its escape sequences are
        /// shown as `?`, not run; through a pipe or into a file it stays byte for byte.
        @Test func decryptedTextReachesATerminalWithoutEscapeSequences() async throws {
            try #require(
                FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "util-linux script is missing")
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyFile = PackageLocations.keys.appendingPathComponent("demo-device-p256.pem")
            let key = try P256.KeyAgreement.PrivateKey(pemRepresentation: String(contentsOf: keyFile, encoding: .utf8))
            let plaintext = "before\u{1B}]0;PWNED\u{07}\u{1B}[2Jafter"
            let compact = try JWE.encrypt(Data(plaintext.utf8), to: key.publicKey)
            let arguments = ["decrypt", "--private-key", keyFile.path, compact]
            let (status, terminal) = try await Self.runOnATerminal(arguments, sandbox: sandbox)
            #expect(status == 0, "\(terminal)")
            #expect(terminal.contains("before?]0;PWNED??[2Jafter"), "\(terminal)")
            #expect(!terminal.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(terminal)")
            let piped = try await sandbox.run(arguments, passphrase: nil)
            #expect(piped.status == 0 && piped.out == plaintext, "\(piped.summary)")
        }

        /// A non-blocking pipe that fills (its reader is slower) is waited on, as a blocking one
        /// is: the whole plaintext arrives. Before, the first EAGAIN ended the output, truncated,
        /// with exit 1.
        @Test func outputIntoAFullNonBlockingPipeWaitsForTheReader() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyFile = PackageLocations.keys.appendingPathComponent("demo-device-p256.pem")
            let key = try P256.KeyAgreement.PrivateKey(pemRepresentation: String(contentsOf: keyFile, encoding: .utf8))
            let plaintext = Data((0..<200_000).map { UInt8(ascii: "a") + UInt8($0 % 26) })
            let compact = try JWE.encrypt(plaintext, to: key.publicKey)
            var ends: [Int32] = [0, 0]
            try #require(pipe(&ends) == 0)
            let (readEnd, writeEnd) = (ends[0], ends[1])
            defer { close(readEnd) }
            // A small pipe (1031 is F_SETPIPE_SZ), non-blocking for the child too (the flag
            // belongs to the open pipe).
            _ = fcntl(writeEnd, 1031, 4096)
            try #require(fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK) == 0)
            let child = try CLIProcess(
                ["decrypt", "--private-key", keyFile.path, "-"], environment: sandbox.environment(passphrase: nil),
                standardInput: Data(compact.utf8))
            child.process.standardOutput = FileHandle(fileDescriptor: writeEnd, closeOnDealloc: true)
            try child.start()  // closes this process's copy of the write end: the read ends at the child's exit
            let received = await DedicatedThreads.run { () -> [UInt8] in
                // The reader comes only once the pipe is full: the child's next write finds no room.
                var available: Int32 = 0
                let deadline = ContinuousClock.now + .seconds(30)
                while ioctl(readEnd, UInt(FIONREAD), &available) == 0, available < 4096, ContinuousClock.now < deadline
                {
                    sched_yield()
                }
                var bytes: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65_536)
                while true {
                    let count = buffer.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
                    if count > 0 {
                        bytes += buffer[..<count]
                    } else if count < 0 && errno == EINTR {
                        continue
                    } else {
                        return bytes
                    }
                }
            }
            let result = await child.waitForExit()
            #expect(result.status == 0, "\(result.err)")
            #expect(received.count == plaintext.count && Data(received) == plaintext, "\(received.count) bytes")
        }

        @Test func aPrivateExportIntoAFileMakesItOwnerOnlyFirst() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            for extra in [["--no-encryption"], [], ["--no-encryption", "--format", "jwk"]] {
                let child = try CLIProcess(
                    ["key", "export", "--private"] + extra + sandbox.storeArguments + ["--", keyId],
                    environment: sandbox.environment())
                try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: child.outputURL.path)
                let result = try await child.runToCompletion()
                #expect(
                    result.status == 0 && (result.out.contains("PRIVATE KEY") || result.out.contains("\"d\"")),
                    "\(result.summary)")
                #expect(try TestPaths.mode(child.outputURL) == 0o600, "\(extra)")
            }
            // A public key is not a secret: its file keeps the mode the shell gave it.
            let child = try CLIProcess(
                ["key", "export"] + sandbox.storeArguments + ["--", keyId], environment: sandbox.environment())
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: child.outputURL.path)
            #expect(try await child.runToCompletion().status == 0)
            #expect(try TestPaths.mode(child.outputURL) == 0o644)
        }

        /// FETCHCHANNEL_PASSPHRASE that is not UTF-8 is refused: read as text, each invalid byte
        /// became U+FFFD, so two different passphrases opened the same key (the shell makes the
        /// bytes; a Swift String could not carry them to the child).
        @Test func aPassphraseVariableThatIsNotUTF8IsRefused() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let child = try CLIProcess([], environment: sandbox.environment(passphrase: nil))
            child.process.executableURL = URL(fileURLWithPath: "/bin/sh")
            child.process.arguments = [
                "-c", #"FETCHCHANNEL_PASSPHRASE="$(printf '\377\376-secret')" exec "$0" key generate --store "$1""#,
                CLIProcess.binary.path, sandbox.store,
            ]
            let refused = try await child.runToCompletion()
            #expect(refused.status == 64, "\(refused.err)")
            #expect(refused.err.contains("FETCHCHANNEL_PASSPHRASE is not UTF-8 text"), "\(refused.err)")
            #expect(!FileManager.default.fileExists(atPath: sandbox.store), "no key was made")
        }

        /// A HOME (or XDG_DATA_HOME) that is not UTF-8 is refused when it would locate the default
        /// key store: read as text, its invalid bytes became U+FFFD, and `key generate` made a
        /// store under another directory than that home.
        @Test(arguments: ["HOME", "XDG_DATA_HOME"])
        func aHomeThatIsNotUTF8IsRefusedForTheDefaultStore(variable: String) async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let child = try CLIProcess([], environment: sandbox.environment())
            child.process.executableURL = URL(fileURLWithPath: "/bin/sh")
            child.process.arguments = [
                "-c", #"export "$2"="$1/h$(printf '\377')"; exec "$0" key generate --no-encryption"#,
                CLIProcess.binary.path, sandbox.root.path, variable,
            ]
            let refused = try await child.runToCompletion()
            #expect(refused.status == 64, "\(refused.err)")
            #expect(refused.err.contains("\(variable) is not UTF-8 text"), "\(refused.err)")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path).allSatisfy { !$0.hasPrefix("h") }
            )
        }

        /// Help and version that cannot be written fail as every other output does: exit 1 with
        /// the reason, not 0 (before, `--help > /dev/full` exited 0).
        @Test(arguments: [["--help"], ["--version"], ["key", "--help"], ["key", "list", "--help"]])
        func helpThatCannotBeWrittenIsAFailure(arguments: [String]) async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let lost = try await sandbox.run(arguments, passphrase: nil, standardOutputPath: "/dev/full")
            #expect(lost.status == 1, "\(arguments): \(lost.summary)")
            #expect(lost.err == "Error: cannot write to standard output\n", "\(arguments): \(lost.summary)")
        }

        /// An argument that is not UTF-8 is refused (exit 64): read as text it became U+FFFD, and
        /// `--store 'st\xff'` made a key store in another directory than the one named.
        @Test func anArgumentThatIsNotUTF8IsRefused() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let child = try CLIProcess([], environment: sandbox.environment())
            child.process.executableURL = URL(fileURLWithPath: "/bin/sh")
            child.process.arguments = [
                "-c", #"exec "$0" key generate --store "$1/st$(printf '\377')""#, CLIProcess.binary.path,
                sandbox.root.path,
            ]
            let refused = try await child.runToCompletion()
            #expect(refused.status == 64, "\(refused.err)")
            #expect(refused.err.hasPrefix("Error: argument 4 is not UTF-8 text"), "\(refused.err)")
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path).allSatisfy {
                    !$0.hasPrefix("st")
                })
        }

        @Test func aPassphraseFileOthersCanReadIsRefusedWithTheFix() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let file = try sandbox.write("passphrase.txt", "shared secret\n")
            for mode in [0o644, 0o640, 0o604, 0o660] {
                try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
                let result = try await sandbox.run(
                    ["key", "generate", "--passphrase-file", file.path] + sandbox.storeArguments,
                    passphrase: nil)
                #expect(result.status == 1, "\(result.summary)")
                #expect(
                    result.err.contains("accessible by group or others")
                        && result.err.contains("chmod 600 \(file.path)"),
                    "\(result.summary)")
            }
            if geteuid() == 0 {
                // Only root can give the file away; elsewhere this half cannot be set up.
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
                #expect(chown(file.path, 4_242, 4_242) == 0)
                let result = try await sandbox.run(
                    ["key", "generate", "--passphrase-file", file.path] + sandbox.storeArguments,
                    passphrase: nil)
                #expect(result.status == 1 && result.err.contains("is not owned by you"), "\(result.summary)")
            }
            #expect(!FileManager.default.fileExists(atPath: sandbox.store), "no key was made")
        }

        /// A FIFO in the sandbox fed without end until `stop()`: a file that never ends. The feeder
        /// holds a read end too, so its writes never raise SIGPIPE; it waits on poll(2), not on time.
        final class EndlessFile: @unchecked Sendable {
            // @unchecked: `stopped` is only read and written under `lock`.
            private let lock = NSLock()
            private var stopped = false

            init(_ url: URL) throws {
                try #require(mkfifo(url.path, 0o600) == 0)
                let descriptor = open(url.path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
                try #require(descriptor >= 0)
                Thread { [self] in
                    let chunk = [UInt8](repeating: 0x41, count: 4_096)
                    while !isStopped {
                        var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                        guard poll(&ready, 1, 50) > 0 else { continue }
                        _ = chunk.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                    }
                    _ = Glibc.close(descriptor)
                }.start()
            }

            private var isStopped: Bool { lock.withLock { stopped } }

            func stop() {
                lock.withLock { stopped = true }
            }
        }

        /// A FIFO that no one writes to is read as empty rather than waited on, wherever a file is
        /// given; a passphrase file that is a symbolic link is refused. (A hang would be killed by
        /// the run's bound and fail the test.)
        @Test func aSilentFIFOOrASymlinkIsRefusedWithoutWaiting() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let fifo = sandbox.file("silent")
            try #require(mkfifo(fifo.path, 0o600) == 0)
            let keyId = try await sandbox.generateKey()
            let store = sandbox.storeArguments
            let imported = try await sandbox.run(["key", "import", fifo.path] + store)
            #expect(imported.status == 1 && imported.err.hasPrefix("Error: "), "\(imported.summary)")
            let verified = try await sandbox.run(["verify", "--public-key", fifo.path, "a.b.c"])
            #expect(verified.status == 1, "\(verified.summary)")
            let fromFIFO = try await sandbox.run(
                ["key", "export", "--private", "--passphrase-file", fifo.path] + store + ["--", keyId], passphrase: nil)
            #expect(fromFIFO.status == 1 && fromFIFO.err.contains("is not a regular file"), "\(fromFIFO.summary)")
            // Nor a device or a directory: the advice to chmod them would do harm.
            for notAFile in ["/dev/null", sandbox.root.path] {
                let refused = try await sandbox.run(
                    ["key", "export", "--private", "--passphrase-file", notAFile] + store + ["--", keyId],
                    passphrase: nil)
                #expect(refused.status == 1 && refused.err.contains("is not a regular file"), "\(refused.summary)")
                #expect(!refused.err.contains("chmod"), "\(refused.summary)")
            }
            let empty = try await sandbox.run(
                ["key", "export", "--private", "--passphrase-file="] + store + ["--", keyId], passphrase: nil)
            #expect(empty.status == 64 && empty.err.contains("non-empty"), "\(empty.summary)")
            let registered = try await sandbox.run(
                [
                    "register", "--server", "https://127.0.0.1:9", "--device-id", "d", "--ca-file", fifo.path, "--key",
                    keyId,
                ]
                    + store)
            #expect(
                registered.status == 64 && registered.err.contains("is not a regular file"), "\(registered.summary)")

            let target = try sandbox.write("pass", "pass\n")
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target.path)
            let link = sandbox.file("pass-link")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
            let linked = try await sandbox.run(
                ["key", "export", "--private", "--passphrase-file", link.path] + store + ["--", keyId], passphrase: nil)
            #expect(linked.status == 1 && linked.err.contains("symbolic link"), "\(linked.summary)")
        }

        @Test func inputFilesAreReadWithABound() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let endless = sandbox.file("endless")
            for arguments in [
                ["key", "import", endless.path] + sandbox.storeArguments,
                ["verify", "--public-key", endless.path, "a.b.c"],
            ] {
                try? FileManager.default.removeItem(at: endless)
                let feeder = try EndlessFile(endless)
                defer { feeder.stop() }
                let result = try await sandbox.run(arguments)
                #expect(result.status == 1 && result.err.contains("larger than 64 KiB"), "\(result.summary)")
            }
        }
    }
}

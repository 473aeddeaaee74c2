import FetchChannelCLI
import FetchChannelTestSupport
import Foundation
import Testing

/// The tool's conventions, run in-process with memory output: help and version to stdout
/// (exit 0), usage errors with the usage line and a pointer to help on stderr (exit 64),
/// runtime failures as `Error: …` (exit 1). On a thread of their own: some commands derive a
/// key (scrypt), lock and fsync the key store in-process.
@Suite(.dedicatedThread) final class CLIDispatchTests {
    struct Run {
        let status: Int32
        let out: String
        let err: String
    }

    /// A directory of the test's own, removed when it ends: the commands' working directory, and
    /// where the paths a test makes up (a missing file, an odd name) lie.
    let sandbox: CLISandbox

    init() throws {
        sandbox = try CLISandbox()
    }

    deinit {
        sandbox.remove()
    }

    /// A home that does not exist: a command that reaches for the default key store (no
    /// `--store`) finds nothing there instead of the real home's keys.
    var absentHome: String { sandbox.file("no-home").path }

    func run(_ arguments: [String], environment: [String: String] = [:], standardInput: [UInt8] = []) async -> Run {
        let sandboxed = ["HOME": absentHome, "XDG_DATA_HOME": absentHome].merging(environment) { $1 }
        let context = CLIContext.inMemory(
            environment: sandboxed, currentDirectory: sandbox.root, standardInput: standardInput)
        let status = await FetchChannelCLI.run(arguments, context: context)
        return Run(status: status, out: context.standardOutput.capturedText, err: context.standardError.capturedText)
    }

    /// `redeem -` on a terminal would read to the end of the input, not of the line, and show
    /// the token as it is typed: it is refused before anything is sent, saying to pipe it in.
    @Test func redeemRefusesToReadTheTokenFromATerminal() async {
        var context = CLIContext.inMemory(
            environment: ["HOME": absentHome], currentDirectory: sandbox.root, standardInput: Array("t\n".utf8))
        context.standardInputIsTerminal = true
        let status = await FetchChannelCLI.run(
            ["redeem", "--redeem-url", "http://127.0.0.1:1/redeem", "-"], context: context)
        #expect(status == 1)
        #expect(context.standardError.capturedText.contains("standard input is a terminal"))
        #expect(context.standardError.capturedText.contains("| fetchchannel redeem --redeem-url URL -"))
    }

    @Test func toolHelpListsEveryCommand() async {
        let result = await run(["--help"])
        #expect(result.status == 0)
        #expect(result.err.isEmpty)
        for spec in FetchChannelCLI.commandSpecs {
            #expect(result.out.contains(spec.path.joined(separator: " ")), "\(spec.path) missing from the help")
            #expect(!spec.abstract.isEmpty && !spec.abstract.contains("\n"), "\(spec.path): one-line abstract")
        }
    }

    @Test func everyCommandHasHelpAndVersion() async {
        for spec in FetchChannelCLI.commandSpecs {
            let help = await run(spec.path + ["--help"])
            #expect(help.status == 0, "\(spec.path)")
            #expect(help.out.contains("USAGE: \(spec.usage)"), "\(spec.path)")
            #expect(help.out.contains("-h, --help") && help.out.contains("--version"), "\(spec.path)")
            #expect(help.err.isEmpty, "\(spec.path)")
            let short = await run(spec.path + ["-h"])
            #expect(short.status == 0 && short.out == help.out, "\(spec.path): -h")
            let version = await run(spec.path + ["--version"])
            #expect(version.status == 0 && version.out == "fetchchannel \(FetchChannelCLI.version)\n", "\(spec.path)")
        }
    }

    @Test func everyCommandOffersJSON() {
        for spec in FetchChannelCLI.commandSpecs {
            #expect(spec.option(named: "json") != nil, "\(spec.path) has no --json")
        }
    }

    @Test func subcommandNamesAreKebabCase() {
        for spec in FetchChannelCLI.commandSpecs {
            for word in spec.path + spec.options.map(\.name) {
                #expect(word.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "-" }, "\(word)")
            }
        }
    }

    @Test func toolVersion() async {
        let result = await run(["--version"])
        #expect(result.status == 0)
        #expect(result.out == "fetchchannel \(FetchChannelCLI.version)\n")
    }

    @Test func usageErrorFormat() async {
        let result = await run(["key", "show", "--bogus"])
        #expect(result.status == 64)
        #expect(result.out.isEmpty)
        #expect(
            result.err == """
                Error: unknown option '--bogus'
                Usage: fetchchannel key show [--store DIR] [--json] KEYID
                  See 'fetchchannel key show --help' for more information.

                """)
    }

    @Test func noCommandUnknownCommandAndMissingSubcommand() async {
        let none = await run([])
        #expect(
            none.status == 64 && none.err.hasPrefix("Error: no command given\n")
                && none.err.contains("See 'fetchchannel --help'"))
        let unknown = await run(["frobnicate"])
        #expect(unknown.status == 64 && unknown.err.hasPrefix("Error: unknown command 'frobnicate'"))
        let group = await run(["key"])
        #expect(
            group.status == 64 && group.err.contains("needs a subcommand")
                && group.err.contains("See 'fetchchannel key --help'"))
        let unknownSub = await run(["key", "frobnicate"])
        #expect(unknownSub.status == 64 && unknownSub.err.contains("unknown subcommand 'frobnicate'"))
        let groupHelp = await run(["key", "--help"])
        #expect(groupHelp.status == 0 && groupHelp.out.contains("generate") && groupHelp.out.contains("delete"))
        for result in [none, unknown, group, unknownSub] {
            #expect(result.out.isEmpty, "usage errors write nothing on stdout")
        }
    }

    /// An unknown option is named without the value written after its `=`.
    @Test func anUnknownOptionsValueIsNotRepeated() async throws {
        for arguments in [["--pwd=hunter2", "key", "list"], ["key", "list", "-x=hunter2"]] {
            let result = await run(arguments)
            #expect(result.status == 64 && result.err.contains("unknown option"), "\(arguments): \(result.err)")
            #expect(!result.err.contains("hunter2"), "\(arguments): \(result.err)")
        }
    }

    @Test func passphraseOnTheCommandLineIsAUsageError() async throws {
        for arguments in [
            ["key", "generate", "--passphrase", "hunter2"], ["--passphrase=hunter2", "key", "list"],
            ["sign", "--key", "abcd", "--passphrase=hunter2"], ["key", "list", "-passphrase=hunter2"],
            ["-pass=hunter2", "key", "list"],
        ] {
            let result = await run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.err.contains("never taken from the command line"), "\(arguments)")
            #expect(
                !result.err.contains("hunter2") && !result.out.contains("hunter2"), "\(arguments): the secret is echoed"
            )
        }
    }

    @Test func noPassphraseAndNoTerminalIsAUsageError() async throws {
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("cli-dispatch-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: store) }
        let result = await run(["key", "generate", "--store", store.path])
        #expect(result.status == 64)
        #expect(result.err.contains("standard input is not a terminal"))
        #expect(result.err.contains("--passphrase-file") && result.err.contains("FETCHCHANNEL_PASSPHRASE"))
        #expect(result.err.contains("Usage: fetchchannel key generate"))
        #expect(!FileManager.default.fileExists(atPath: store.path), "nothing was created")
    }

    /// A usage error that repeats a path as typed shows it without control characters: an
    /// escape sequence in an argument cannot retitle or clear the terminal.
    @Test func aUsageErrorShowsWhatWasTypedWithoutControlCharacters() async {
        let result = await run([
            "skew", "--server", "https://127.0.0.1:1", "--ca-file", sandbox.file("x\u{1B}]0;PWNED\u{07}").path,
        ])
        #expect(result.status == 64, "\(result.err)")
        #expect(result.err.hasPrefix("Error: ") && result.err.contains("/x?]0;PWNED?"), "\(result.err)")
        #expect(!result.err.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 })
    }

    /// A key reference longer than a key id is no prefix of one: a usage error that shows only
    /// the start of it (before, 120 KB of it were echoed in a runtime error).
    @Test func aKeyReferenceLongerThanAKeyIdIsRefused() async {
        for length in [44, 120_000] {
            let result = await run(["key", "show", String(repeating: "A", count: length)])
            #expect(
                result.status == 64 && result.err.contains("is not a key id"), "\(length): \(result.err.prefix(200))")
            #expect(result.err.utf8.count < 1_000, "\(length): the reference is shown cut")
        }
    }

    /// A runtime error is one line: a path with a line feed cannot forge a second `Error:` line.
    @Test func aRuntimeErrorIsOneLine() async {
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("none-\(UUID().uuidString)").path
        let result = await run(["key", "import", sandbox.file("missing\nError: forged").path, "--store", store])
        #expect(result.status == 1, "\(result.err)")
        #expect(result.err.hasPrefix("Error: cannot read") && result.err.contains("?Error: forged"), "\(result.err)")
        #expect(result.err.filter { $0 == "\n" }.count == 1, "\(result.err)")
    }

    @Test func emptyPassphraseSourcesAreRefused() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cli-dispatch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let empty = directory.appendingPathComponent("empty")
        try Data("\n".utf8).write(to: empty)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: empty.path)
        let store = directory.appendingPathComponent("keys").path
        let fromFile = await run(["key", "generate", "--store", store, "--passphrase-file", empty.path])
        // A bad file, not a command line that cannot run as typed: exit 1, as for a file of the wrong mode.
        #expect(fromFile.status == 1 && fromFile.err.contains("is empty"), "\(fromFile.err)")
        let fromEnvironment = await run(
            ["key", "generate", "--store", store], environment: ["FETCHCHANNEL_PASSPHRASE": ""])
        #expect(
            fromEnvironment.status == 64 && fromEnvironment.err.contains("FETCHCHANNEL_PASSPHRASE is set but empty"))
        let missing = await run([
            "key", "generate", "--store", store, "--passphrase-file", directory.appendingPathComponent("nope").path,
        ])
        #expect(missing.status == 1 && missing.err.hasPrefix("Error: cannot read the passphrase file"))
    }

    @Test func passphraseFileFirstLineIsThePassphrase() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cli-dispatch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("pass")
        try Data("first line\r\nsecond line\n".utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let store = directory.appendingPathComponent("keys").path
        let generated = await run(["key", "generate", "--store", store, "--passphrase-file", file.path])
        #expect(generated.status == 0, "\(generated.err)")
        let keyId = generated.out.trimmingCharacters(in: .whitespacesAndNewlines)
        // The environment's "first line" opens it: the file's CRLF and second line were not part of it.
        let exported = await run(
            ["key", "export", "--store", store, "--private", "--", keyId],
            environment: ["FETCHCHANNEL_PASSPHRASE": "first line"])
        #expect(exported.status == 0, "\(exported.err)")
        let wrong = await run(
            ["key", "export", "--store", store, "--private", "--", keyId],
            environment: ["FETCHCHANNEL_PASSPHRASE": "first line\r"])
        #expect(wrong.status == 1 && wrong.err.contains("does not open key"))
        #expect(wrong.out.isEmpty)
    }

    @Test func invalidServerURLsAreUsageErrors() async {
        for server in [
            "http://backend.example", "ftp://127.0.0.1", "not a url", "https://u:p@backend.example",
            "https://backend.example/?q=1",
        ] {
            let result = await run(["register", "--server", server, "--device-id", "d", "--key", "abcd"])
            #expect(result.status == 64, "\(server): \(result.err)")
        }
    }

    /// A key reference that cannot be a key id is refused in the parse step, before the key store
    /// is opened: a usage error even where the store does not exist.
    @Test func malformedKeyIdsAreRefusedBeforeTheStoreIsOpened() async {
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("no-store-\(UUID().uuidString)").path
        for arguments in [
            ["key", "show", "a/b"], ["key", "export", "abc"], ["sign", "--key", "a b c d"],
            ["rotate", "--key", "ab"], ["fetch", "--key", "!!!!"],
        ] {
            let result = await run(arguments + ["--store", store])
            #expect(result.status == 64, "\(arguments): \(result.err)")
            #expect(result.err.contains("is not a key id"), "\(arguments): \(result.err)")
        }
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    /// Key ids are base64url, so a reference with a Unicode letter or digit is refused in the parse
    /// step as any other malformed one, not looked up in the store.
    @Test func nonASCIIKeyReferencesAreRefusedBeforeTheStoreIsOpened() async {
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("no-store-\(UUID().uuidString)").path
        for arguments in [
            ["sign", "--key", "ééééé"], ["fetch", "--key", "ＡＢＣＤ"], ["key", "show", "abc١"],
            ["key", "export", "Ωmega"], ["rotate", "--key", "abcd\u{301}"], ["register", "--key", "ßßßß"],
        ] {
            let extra = arguments.first == "register" ? ["--server", "http://127.0.0.1:9", "--device-id", "d"] : []
            let result = await run(arguments + extra + ["--store", store])
            #expect(result.status == 64, "\(arguments): \(result.err)")
            #expect(result.err.contains("is not a key id"), "\(arguments): \(result.err)")
        }
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test func serveRefusesBadNumbers() async {
        for arguments in [
            ["--port", "65536"], ["--port", "-1"], ["--tolerance-seconds", "-1"], ["--clock-offset-seconds", "inf"],
        ] {
            let result = await run(["serve"] + arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.err.contains("invalid value"), "\(arguments)")
        }
    }

    /// A hex float is a malformed number like any other: a usage error, before anything is sent.
    @Test func hexFloatsAreUsageErrors() async {
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("no-store-\(UUID().uuidString)").path
        for arguments in [
            ["skew", "--server", "http://127.0.0.1:9", "--tolerance-seconds", "0x1p3"],
            ["skew", "--server", "http://127.0.0.1:9", "--timeout-seconds", "0x1P3"],
            ["fetch", "--timeout-seconds", "0x10", "--store", store],
            [
                "redeem", "TOKEN", "--redeem-url", "http://127.0.0.1:9/r", "--timeout-seconds", "0x1p3", "--store",
                store,
            ],
        ] {
            let result = await run(arguments)
            #expect(result.status == 64, "\(arguments): \(result.err)")
            #expect(result.err.hasPrefix("Error: invalid value '0x"), "\(arguments): \(result.err)")
        }
    }

    @Test func fetchRedeemSkewAndDemoParseStrictly() async {
        #expect(await run(["fetch", "--policy"]).status == 64)
        #expect(await run(["fetch", "--policy", "everything"]).status == 64)
        #expect(await run(["redeem"]).status == 64)
        #expect(await run(["redeem", "TOKEN"]).status == 64, "--redeem-url is required")
        #expect(
            await run(["redeem", "TOKEN", "--redeem-url", "http://backend.example/r"]).status == 64,
            "https only, except on loopback")
        #expect(await run(["skew"]).status == 64)
        #expect(
            await run(["skew", "--server", "http://backend.example"]).status == 64, "https only, except on loopback")
        #expect(await run(["skew", "--server", "https://b.example", "--samples", "0"]).status == 64)
        #expect(await run(["demo", "extra"]).status == 64)
    }

    /// `skew --timeout-seconds` is read as fetch's and redeem's: the same bounds, the same refusal.
    @Test func skewTakesTheTimeoutOfFetchAndRedeem() async {
        let commands = [
            ["skew", "--server", "http://127.0.0.1:9"], ["fetch"],
            ["redeem", "TOKEN", "--redeem-url", "http://127.0.0.1:9/r"],
        ]
        for value in ["0", "0.05", "600.5", "-1", "ten"] {
            var messages: Set<String> = []
            for command in commands {
                let result = await run(command + ["--timeout-seconds", value])
                #expect(result.status == 64, "\(command) \(value): \(result.err)")
                messages.insert(String(result.err.prefix { $0 != "\n" }))
            }
            #expect(
                messages == [
                    "Error: invalid value '\(value)' for '--timeout-seconds': expected a number from 0.1 to 600"
                ])
        }
        let help = await run(["skew", "--help"])
        #expect(help.out.contains("--timeout-seconds S"), "\(help.out)")
    }

    /// `-h` as an option's value is that value, not a request for help that exits 0 (a script
    /// passing a value it did not choose took that for success). `--version` where an option may
    /// stand is the version, for `redeem` as for every command: a token that could be read as an
    /// option goes after `--`, and is then a token.
    @Test func helpAndVersionOnlyWhereAnOptionMayStand() async {
        let signed = await run(["sign", "--key", "abcd", "--request-id", "-h"])
        #expect(signed.status == 1 && signed.out.isEmpty && signed.err.hasPrefix("Error: "), "\(signed.err)")
        let redeemed = await run(["redeem", "TOKEN", "--redeem-url", "-h"])
        #expect(redeemed.status == 64 && redeemed.out.isEmpty, "\(redeemed.out)")
        #expect(redeemed.err.hasPrefix("Error: invalid value '-h' for '--redeem-url'"), "\(redeemed.err)")

        let version = await run(["redeem", "--version", "--redeem-url", "http://127.0.0.1:9/r"])
        #expect(version.status == 0 && version.out == "fetchchannel \(FetchChannelCLI.version)\n")
        let token = await run([
            "redeem", "--redeem-url", "https://127.0.0.1:9/r", "--ca-file", sandbox.file("missing/ca.pem").path, "--",
            "--version",
        ])
        #expect(token.status == 64 && token.err.contains("cannot read the CA file"), "\(token.err)")
    }

    @Test func verifyReadsTheJWSFromStandardInputAndRejectsGarbage() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cli-dispatch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("key.jwk")
        // RFC 7515 A.3's public key and its example JWS (payload: the JWT claims of the RFC).
        try Data(
            #"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}"#
                .utf8
        ).write(to: keyFile)
        let jws =
            "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
        let valid = await run(["verify", "--public-key", keyFile.path, "-"], standardInput: Array((jws + "\n").utf8))
        #expect(valid.status == 0, "\(valid.err)")
        #expect(valid.out.hasPrefix(#"{"iss":"joe""#))
        let garbage = await run(["verify", "--public-key", keyFile.path, "-"], standardInput: Array("not a jws".utf8))
        #expect(garbage.status == 1)
        #expect(garbage.out.isEmpty)
        #expect(garbage.err.hasPrefix("Error: the JWS is not valid:"))
    }
    /// Paths keep their `..` for the file system to resolve: after a symbolic link it is the
    /// target's parent, and resolving it in the text (URL standardization) named another file than
    /// `cat` opens. Only `.` segments and repeated slashes are taken out.
    @Test func pathsKeepTheirParentSegmentsForTheFileSystem() throws {
        let context = CLIContext.inMemory(
            environment: ["HOME": "/home/someone"],
            currentDirectory: URL(fileURLWithPath: "/work/dir", isDirectory: true))
        #expect(try context.fileURL("lnk/../pass").path == "/work/dir/lnk/../pass")
        #expect(try context.fileURL("./a//b/").path == "/work/dir/a/b")
        #expect(try context.fileURL("/abs/./x/../y").path == "/abs/x/../y")
        #expect(try context.fileURL("~/keys/../other").path == "/home/someone/keys/../other")
        #expect(try context.fileURL("~").path == "/home/someone")
        #expect(try context.fileURL("/").path == "/")
        // Without a working directory (it was removed) only a relative path is refused.
        let adrift = CLIContext.inMemory(environment: ["HOME": "/home/someone"], currentDirectory: nil)
        #expect(throws: UsageError.self) { try adrift.fileURL("relx.pem") }
        #expect(try adrift.fileURL("/abs/x").path == "/abs/x" && adrift.fileURL("~/x").path == "/home/someone/x")
    }
}

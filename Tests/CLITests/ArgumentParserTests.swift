import FetchChannelCLI
import Testing

@Suite struct ArgumentParserTests {
    static let store = Option("store", "DIR", help: "Store.")
    static let format = Option("format", "pem|jwk|der", help: "Format.")
    static let key = Option("key", "KEYID", help: "Repeatable key.", repeatable: true, .text)
    static let offset = Option("offset", "S", help: "A number that may be negative.")
    static let json = Flag("json", help: "JSON.")
    static let privateKey = Flag("private", help: "Private.")
    static let server = Option("server", "URL", help: "Server.", required: true)

    static let spec = CommandSpec(
        path: ["key", "export"], abstract: "Export.",
        options: [store, format, key, offset, json, privateKey],
        positionals: [
            PositionalSpec("KEYID", help: "Key."), PositionalSpec("EXTRA", help: "Optional.", optional: true),
        ])

    static let required = CommandSpec(
        path: ["register"], abstract: "Register.",
        options: [server, json])

    func parse(_ arguments: [String], _ spec: CommandSpec = spec) throws(UsageError) -> ParseOutcome {
        try ArgumentParser.parse(arguments, spec: spec)
    }

    func arguments(_ arguments: [String], _ spec: CommandSpec = spec) throws -> ParsedArguments {
        guard case .arguments(let parsed) = try parse(arguments, spec) else {
            Issue.record("expected arguments for \(arguments)")
            return ParsedArguments()
        }
        return parsed
    }

    /// The message of the usage error `arguments` cause, or nil when they parse.
    func usageError(_ arguments: [String], _ spec: CommandSpec = spec) -> String? {
        do {
            _ = try parse(arguments, spec)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func valuesFlagsAndPositionals() throws {
        let parsed = try arguments(["--store", "/tmp/s", "--json", "ABCD", "--format=jwk", "more"])
        #expect(try parsed[Self.store] == "/tmp/s")
        #expect(try parsed[Self.format] == "jwk")
        #expect(parsed[Self.json])
        #expect(!parsed[Self.privateKey])
        #expect(parsed.positionals == ["ABCD", "more"])
    }

    @Test func inlineValueMayBeEmptyOrContainEquals() throws {
        let parsed = try arguments(["--store=a=b", "--format=", "K"])
        #expect(try parsed[Self.store] == "a=b")
        #expect(try parsed[Self.format] == "")
    }

    @Test func repeatableOptionKeepsEveryValueInOrder() throws {
        let parsed = try arguments(["--key", "a", "K", "--key=b", "--key", "c"])
        #expect(try parsed.values(of: Self.key) == ["a", "b", "c"])
    }

    @Test func negativeNumberIsAValue() throws {
        #expect(try arguments(["--offset", "-30", "K"])[Self.offset] == "-30")
    }

    @Test func base64urlValuesMayStartWithDashes() throws {
        // Key ids and tokens are base64url: one in 64 starts with "-", one in 4096 with "--".
        let keyId = "-d6RBYstHz_6MuzMPYJQaC0dM0VPRv9cidfTpNu8-0c"
        let other = "--RBYstHz_6MuzMPYJQaC0dM0VPRv9cidfTpNu8-0cx"
        #expect(try arguments([keyId]).positionals == [keyId])
        #expect(try arguments([other, "--json"]).positionals == [other])
        #expect(try arguments(["--store", other, "K"])[Self.store] == other)
        #expect(try arguments(["--key", keyId, "K"]).values(of: Self.key) == [keyId])
        // Short words that start with dashes are still options, known or not.
        #expect(usageError(["--js0n", "K"]) == "unknown option '--js0n'")
        #expect(usageError(["-d6RB", "K"]) == "unknown option '-d6RB' (a value that starts with '-' goes after '--')")
        #expect(usageError(["--store", "--short", "K"]) == "option '--store' needs a value (DIR)")
    }

    /// A long word written like an option is an unknown option, not a value: before, a made-up
    /// `--insecure-skip-tls-verify` became `redeem`'s token and was sent to the backend.
    @Test func aLongWordWrittenLikeAnOptionIsAnUnknownOption() throws {
        #expect(usageError(["--insecure-skip-tls-verify", "K"]) == "unknown option '--insecure-skip-tls-verify'")
        #expect(usageError(["K", "--public-key-format-please"]) == "unknown option '--public-key-format-please'")
        // Base64url values that start with dashes but are not written so stay values.
        #expect(try arguments(["--xYz-insecure-skip-tls-verify"]).positionals == ["--xYz-insecure-skip-tls-verify"])
        #expect(try arguments(["--insecure--skip-tls-verify"]).positionals == ["--insecure--skip-tls-verify"])
    }

    @Test func doubleDashEndsOptions() throws {
        let parsed = try arguments(["--json", "--", "--not-an-option", "-h"])
        #expect(parsed[Self.json])
        #expect(parsed.positionals == ["--not-an-option", "-h"])
    }

    @Test func loneDashIsPositional() throws {
        #expect(try arguments(["-"]).positionals == ["-"])
    }

    @Test func helpAndVersionWinOverErrors() throws {
        #expect(try parse(["--bogus", "-h"]) == .help)
        #expect(try parse(["--help"]) == .help)
        #expect(try parse(["--version", "--bogus"]) == .version)
        #expect(usageError([], Self.required) == "missing option '--server URL'")
        #expect(try parse(["--help"], Self.required) == .help, "help needs no required option")
        // After `--`, "-h" is a positional, not help.
        #expect(try arguments(["--", "-h"]).positionals == ["-h"])
    }

    /// Help and version count only where an option may stand: the value an option takes is that
    /// value, `-h` too (before, `sign --request-id -h` printed the help and exited 0, and a value
    /// chosen by someone else could turn any command into a success that did nothing).
    @Test func helpAndVersionAreNeverAnOptionsValue() throws {
        #expect(try arguments(["--store", "-h", "K"])[Self.store] == "-h")
        #expect(try arguments(["--offset=-h", "K"])[Self.offset] == "-h")
        #expect(try arguments(["--key", "-h", "--key", "-h", "K"]).values(of: Self.key) == ["-h", "-h"])
        // A word that starts with `--` is never taken as a value: there, help and version still win.
        #expect(try parse(["--store", "--help"]) == .help)
        #expect(try parse(["--store", "--version", "K"]) == .version)
        #expect(try parse(["--store", "-h", "K", "-h"]) == .help, "after the value, -h is help again")
        #expect(try parse(["--json", "-h"]) == .help, "a flag takes no value")
        #expect(try parse(["--bogus", "-h"]) == .help, "an unknown option takes no value")
    }

    @Test func unknownOptionsAreRefused() {
        #expect(usageError(["--bogus", "K"]) == "unknown option '--bogus'")
        #expect(usageError(["-x", "K"]) == "unknown option '-x' (a value that starts with '-' goes after '--')")
        #expect(usageError(["--jsn", "K"]) == "unknown option '--jsn'", "no abbreviations")
        #expect(
            usageError(["-json", "K"]) == "unknown option '-json' (a value that starts with '-' goes after '--')",
            "no single-dash long options")
    }

    @Test func unknownOptionMessageNeverRepeatsItsValue() throws {
        let message = try #require(usageError(["--token=s3cr3t-value", "K"]))
        #expect(!message.contains("s3cr3t-value"))
    }

    @Test func flagsTakeNoValue() {
        #expect(usageError(["--json=yes", "K"]) == "option '--json' takes no value")
    }

    @Test func optionsNeedTheirValue() throws {
        #expect(usageError(["K", "--store"]) == "option '--store' needs a value (DIR)")
        #expect(
            usageError(["--store", "--json", "K"]) == "option '--store' needs a value (DIR)",
            "a following option is not taken as the value")
        #expect(try arguments(["--store=--odd", "K"])[Self.store] == "--odd", "but --name=VALUE takes anything")
    }

    @Test func nonRepeatableOptionsOnce() {
        #expect(usageError(["--store", "a", "--store", "b", "K"]) == "option '--store' was given more than once")
        #expect(usageError(["--json", "--json", "K"]) == "option '--json' was given more than once")
    }

    @Test func positionalCountIsChecked() {
        #expect(usageError([]) == "missing argument KEYID")
        #expect(usageError(["a", "b", "c"]) == "unexpected argument 'c'")
    }

    @Test func requiredOptionsAreChecked() throws {
        #expect(usageError(["--json"], Self.required) == "missing option '--server URL'")
        #expect(try arguments(["--server", "https://b.example"], Self.required)[Self.server] == "https://b.example")
    }

    @Test(arguments: [
        "--passphrase", "--passphrase=hunter2", "--password", "--PASSPHRASE=x", "--pass", "--passin", "--secret=x",
    ])
    func passphraseOptionsAreRefusedWithTheReason(_ argument: String) throws {
        let message = try #require(usageError(["K", argument, "hunter2"]))
        #expect(message.contains("never taken from the command line"), "\(message)")
        #expect(message.contains("--passphrase-file"))
        #expect(message.contains("FETCHCHANNEL_PASSPHRASE"))
        #expect(!message.contains("hunter2"), "the secret is not echoed")
    }

    @Test func passphraseIsRefusedEvenWhenOtherwiseValid() {
        // Any command, whatever else is on the line.
        #expect(
            usageError(["--server", "https://b.example", "--passphrase", "x"], Self.required)?.contains("never taken")
                == true)
    }

    @Test func controlCharactersInMessagesAreReplaced() throws {
        let message = try #require(usageError(["a", "b", "c\u{1b}[31m"]))
        #expect(!message.contains("\u{1b}"))
    }

    @Test func usageLineListsEveryOption() {
        #expect(
            Self.spec.usage
                == "fetchchannel key export [--store DIR] [--format pem|jwk|der] [--key KEYID] [--offset S] [--json] [--private] KEYID [EXTRA]"
        )
        #expect(Self.required.usage == "fetchchannel register --server URL [--json]")
    }

    @Test func typedValuesAreValidated() throws {
        let port = Option("port", "PORT", help: "", .integer(in: 0...65_535))
        let seconds = Option("seconds", "S", help: "", .decimal(in: -10...10))
        let format = Option("format", "F", help: "", .choice(["pem", "jwk"]))
        let absent = Option("absent", "N", help: "", .integer(in: 0...1))
        let spec = CommandSpec(path: ["serve"], abstract: "Serve.", options: [port, seconds, format, absent])
        let good = try arguments(["--port", "8080", "--seconds", "-1.5", "--format", "jwk"], spec)
        #expect(try good[port] == 8080)
        #expect(try good[seconds] == -1.5)
        #expect(try good[format] == "jwk")
        #expect(try good[absent] == nil)

        let bad = try arguments(["--port", "70000", "--seconds", "nan", "--format", "xml"], spec)
        #expect(
            message { () throws(UsageError) in try bad[port] }
                == "invalid value '70000' for '--port': expected an integer in 0...65535")
        #expect(throws: UsageError.self) { try bad[seconds] }
        #expect(
            message { () throws(UsageError) in try bad[format] }
                == "invalid value 'xml' for '--format': expected one of pem, jwk")
        let notANumber = try arguments(["--port", "12abc"], spec)
        #expect(throws: UsageError.self) { try notANumber[port] }
    }

    /// The message of the usage error `body` throws, or nil.
    func message<Value>(_ body: () throws(UsageError) -> Value) -> String? {
        do {
            _ = try body()
            return nil
        } catch {
            return error.message
        }
    }
    /// An option copied from formatted text starts with a typographic dash (`—passphrase=…` from
    /// `--passphrase=…`): it was taken as a positional and repeated whole, value included, in the
    /// error. It is refused by its name only, as a secret when named like one.
    @Test(arguments: ["\u{2014}passphrase=hunter2", "\u{2013}\u{2013}passphrase=hunter2", "\u{2212}-pass=hunter2"])
    func aTypographicDashBeforeASecretOptionIsRefusedWithoutItsValue(_ word: String) {
        let message = usageError([word])
        #expect(
            message?.contains("a passphrase is never taken from the command line") == true,
            "\(String(describing: message))")
        #expect(message?.contains("hunter2") == false)
        let other = usageError(["\u{2014}store=/tmp/x", "K"])
        #expect(
            other?.contains("typographic dash") == true && other?.contains("/tmp/x") == false,
            "\(String(describing: other))")
    }
}

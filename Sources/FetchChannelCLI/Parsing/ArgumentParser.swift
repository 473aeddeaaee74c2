/// A small, strict command-line parser.
///
/// - Long options only: `--name VALUE` or `--name=VALUE`, and flags `--name`. The only short
///   option is `-h`. No abbreviations, no bundling.
/// - `-h`/`--help` and `--version` where an option may stand (before `--`, and not as the value
///   an option takes: `--request-id -h` is a request id) win over everything else.
/// - Refused (a `UsageError`): an unknown option; a flag given a value; an option without its
///   value (a following word that starts with `--` is not taken as a value: write `--name=--x`);
///   a non-repeatable option given twice; a missing required option; too few or too many
///   positional arguments; any option that looks like a passphrase (`--passphrase`,
///   `--password`, …), with the reason.
/// - `--` ends the options: every later word is positional. A lone `-` is positional (standard
///   input, where a command supports it).
/// - A word of 20 or more base64url characters (`A–Z a–z 0–9 - _`) that does not name an option
///   of the command, and is not written like one (`--` and lower-case words joined by single
///   dashes), is a value even when it starts with `-` or `--`, as a key id or a token may (one in
///   64 starts with "-"), so such values need no `--`.
///
/// Error messages name the option. A value given with it is repeated only shortened and without
/// control characters (``shown(_:)``), and never for an option named like a secret: such an
/// option is refused without its value, so a passphrase typed by mistake is not echoed.
package enum ArgumentParser: Sendable {
    /// Option names that would carry a secret on the command line, where other users can read
    /// it in the process list and it stays in the shell history.
    package static let forbiddenSecretOptions: Set<String> = [
        "passphrase", "password", "pass", "passin", "passout", "secret",
    ]

    package static let secretOnCommandLineMessage =
        "a passphrase is never taken from the command line: other users can read it in the process list and it stays in the shell history. Use --passphrase-file FILE, the FETCHCHANNEL_PASSPHRASE environment variable, or the prompt (when standard input is a terminal)"

    package static func parse(_ arguments: [String], spec: CommandSpec) throws(UsageError) -> ParseOutcome {
        // Help and version first, so that `--help` works whatever else is on the line.
        if let request = helpOrVersion(in: arguments, spec: spec) { return request }

        var parsed = ParsedArguments()
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if !onlyPositionals, let dash = argument.unicodeScalars.first, typographicDashes.contains(dash.value) {
                try refuseTypographicDash(argument)
            }
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") || isValueWord(argument, spec) {
                parsed.positionals.append(argument)
            } else if argument == "--" {
                onlyPositionals = true
            } else {
                try parseOption(argument, followedBy: arguments, at: &index, spec: spec, into: &parsed)
            }
        }
        try checkComplete(parsed, spec: spec)
        return .arguments(parsed)
    }

    /// `.help` or `.version` when `-h`/`--help` or `--version` stands where an option may: words
    /// are taken as the main loop takes them, so an option's value (`--request-id -h`, a value
    /// someone else chose) is never a request for help that exits 0. Nothing is refused here: an
    /// unknown option takes no value, and help still wins over it.
    private static func helpOrVersion(in arguments: [String], spec: CommandSpec) -> ParseOutcome? {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            switch argument {
            case "--": return nil
            case "-h", "--help": return .help
            case "--version": return .version
            default: break
            }
            guard argument.hasPrefix("--"), !argument.contains("="), !isValueWord(argument, spec),
                case .value? = spec.option(named: String(argument.dropFirst(2)))?.kind
            else { continue }
            if index < arguments.count, isTakenAsValue(arguments[index], spec) { index += 1 }
        }
        return nil
    }

    /// Whether the word after a `--name` that takes a value is that value: not when it starts with
    /// `--` (write `--name=--x`), unless it is a value word (``isValueWord(_:_:)``).
    private static func isTakenAsValue(_ word: String, _ spec: CommandSpec) -> Bool {
        !word.hasPrefix("--") || isValueWord(word, spec)
    }

    /// Hyphen, non-breaking hyphen, figure dash, en dash, em dash, horizontal bar, minus sign,
    /// small and full-width hyphen-minus: what a word processor or a web page makes of `--`.
    static let typographicDashes: Set<UInt32> = [
        0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212, 0xFE58, 0xFE63, 0xFF0D,
    ]

    /// A word that starts with a typographic dash is an option copied from formatted text, never a
    /// value: refused with its name only (a `—passphrase=…` was repeated whole, value included, as
    /// an unexpected argument), and as a secret when it is named like one.
    private static func refuseTypographicDash(_ argument: String) throws(UsageError) {
        let written = argument.prefix { $0 != "=" }
        let name = written.unicodeScalars.drop { typographicDashes.contains($0.value) || $0 == "-" }
        if forbiddenSecretOptions.contains(String(String.UnicodeScalarView(name)).lowercased()) {
            throw UsageError(.secretOnCommandLine, "\(shown(written)) is not an option: \(secretOnCommandLineMessage).")
        }
        throw UsageError(
            .unknownOption,
            "'\(shown(written))' starts with a typographic dash where an option has two ASCII hyphens ('--')")
    }

    /// One `--name`, `--name=VALUE` or `--name VALUE` (which takes the next word, moving `index`).
    private static func parseOption(
        _ argument: String, followedBy arguments: [String], at index: inout Int, spec: CommandSpec,
        into parsed: inout ParsedArguments
    ) throws(UsageError) {
        guard argument.hasPrefix("--") else {
            // A single dash: named like a secret, it is refused as one; otherwise only the text
            // before any `=` is repeated, never a value.
            let written = argument.prefix { $0 != "=" }
            if forbiddenSecretOptions.contains(written.drop { $0 == "-" }.lowercased()) {
                throw UsageError(
                    .secretOnCommandLine,
                    "\(shown(written)) is not an option: \(secretOnCommandLineMessage).")
            }
            // A short key id prefix can start with a dash (one in 64 does): say how to give it.
            throw UsageError(
                .unknownOption, "unknown option '\(shown(written))' (a value that starts with '-' goes after '--')")
        }
        let body = argument.dropFirst(2)
        let name: String
        let inlineValue: String?
        if let equals = body.firstIndex(of: "=") {
            name = String(body[..<equals])
            inlineValue = String(body[body.index(after: equals)...])
        } else {
            name = String(body)
            inlineValue = nil
        }
        if forbiddenSecretOptions.contains(name.lowercased()) {
            throw UsageError(.secretOnCommandLine, "--\(name) is not an option: \(secretOnCommandLineMessage).")
        }
        guard let option = spec.option(named: name) else {
            throw UsageError(.unknownOption, "unknown option '--\(shown(name))'")
        }
        if !option.isRepeatable, parsed.flags.contains(name) || parsed.values[name] != nil {
            throw UsageError(.malformedOption, "option '--\(name)' was given more than once")
        }
        switch option.kind {
        case .flag:
            guard inlineValue == nil else {
                throw UsageError(.malformedOption, "option '--\(name)' takes no value")
            }
            parsed.flags.insert(name)
        case .value(let placeholder):
            let value: String
            if let inlineValue {
                value = inlineValue
            } else if index < arguments.count, isTakenAsValue(arguments[index], spec) {
                value = arguments[index]
                index += 1
            } else {
                throw UsageError(.malformedOption, "option '--\(name)' needs a value (\(placeholder))")
            }
            parsed.values[name, default: []].append(value)
        }
    }

    /// Every required option given, and as many positionals as the spec takes.
    private static func checkComplete(_ parsed: ParsedArguments, spec: CommandSpec) throws(UsageError) {
        for option in spec.options where option.isRequired {
            if parsed.values[option.name] == nil && !parsed.flags.contains(option.name) {
                switch option.kind {
                case .flag: throw UsageError(.missingOption, "missing option '--\(option.name)'")
                case .value(let placeholder):
                    throw UsageError(.missingOption, "missing option '--\(option.name) \(placeholder)'")
                }
            }
        }
        let required = spec.positionals.filter { !$0.isOptional }
        if parsed.positionals.count < required.count {
            throw UsageError(.wrongArgumentCount, "missing argument \(required[parsed.positionals.count].name)")
        }
        if parsed.positionals.count > spec.positionals.count {
            throw UsageError(
                .wrongArgumentCount, "unexpected argument '\(shown(parsed.positionals[spec.positionals.count]))'")
        }
    }

    /// At least 20 base64url characters that do not name an option of `spec` (nor a forbidden
    /// one) and are not written like one: a key id, token or similar value. `--` and lower-case
    /// words joined by single dashes (`--insecure-skip-tls-verify`) is an option, unknown here, not
    /// a value: taken as one, a mistyped or made-up option became a token that was sent. A random
    /// base64url value is written so about once in 10^8.
    static func isValueWord(_ argument: String, _ spec: CommandSpec) -> Bool {
        let name = String(argument.drop { $0 == "-" })
        guard spec.option(named: name) == nil, !forbiddenSecretOptions.contains(name.lowercased()),
            !isWrittenLikeAnOption(argument)
        else { return false }
        return argument.utf8.count >= 20
            && argument.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }

    /// `--` then lower-case letters and digits in words joined by single dashes, the first word
    /// starting with a letter: how every option of this tool is written.
    private static func isWrittenLikeAnOption(_ argument: String) -> Bool {
        guard argument.hasPrefix("--") else { return false }
        let words = argument.dropFirst(2).split(separator: "-", omittingEmptySubsequences: false)
        return words.first?.first?.isLowercase == true
            && words.allSatisfy { word in
                !word.isEmpty && word.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) }
            }
    }

    /// An argument as it may appear in a message: at most 64 characters, control characters
    /// replaced, so that a message is always one readable line.
    static func shown(_ text: some StringProtocol) -> String {
        let cleaned = String(
            text.unicodeScalars.prefix(64).map { scalar -> Character in
                scalar.properties.generalCategory == .control ? "?" : Character(scalar)
            })
        return text.unicodeScalars.count > 64 ? cleaned + "…" : cleaned
    }
}

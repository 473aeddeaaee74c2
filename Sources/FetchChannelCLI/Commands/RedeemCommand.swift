import DeviceSigning
import FetchChannel
import Foundation

/// `fetchchannel redeem`: the redemption client on the command line, for one token.
struct RedeemCommand: CLICommand {
    static let redeemURL = Option(
        "redeem-url", "URL", help: "The operation's redeemUrl (from 'fetch --json'), sent as given.", required: true,
        .redeemURL)
    static let timeout = CommonOptions.timeout(help: "Request timeout (default: 15).")

    static let spec = CommandSpec(
        path: ["redeem"],
        abstract: "Redeem an operation's token at its redeem URL, once.",
        discussion:
            "POSTs {\"token\"} to the redeem URL (https://, or http:// on loopback), which you name: unlike the library's pipeline, this manual command does not restrict it to the backends a key is registered with. The TLS trust is --ca-file/--pin when given, else the one stored with the registration whose backend holds the URL (registrations of it that disagree on the trust exit 1), else the system CAs. Prints the backend's answer (op, statusCode, lifetimeMillis, uafRequest) and exits 0; a token redeemed before, an expired one or a failure exits 1 with what it means. --json prints the answer object, or {\"redeemed\": false, \"code\", \"message\"}.",
        options: [redeemURL, timeout, CommonOptions.store, CommonOptions.json] + BackendTrustOptions.all,
        positionals: [
            PositionalSpec(
                "TOKEN",
                help: "The operation's redeem token, or - to read it from standard input (one line): "
                    + "a token in the arguments is in the process list and the shell history.")
        ]
    )

    /// TOKEN as given; `-` stands for one line of standard input, read when the command runs.
    let tokenArgument: String
    let context: CLIContext
    /// `--redeem-url`, and `--ca-file`/`--pin` when given.
    let backend: BackendOptions
    private var url: BackendURL { backend.server }
    let timeout: Duration
    let access: KeyStoreAccess
    private var console: Console { access.console }

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        tokenArgument = arguments.positionals[0]
        guard !tokenArgument.isEmpty else { throw UsageError(.invalidValue, "TOKEN must not be empty") }
        self.context = context
        backend = try BackendOptions(arguments, server: Self.redeemURL, context: context)
        timeout = try arguments[Self.timeout] ?? .seconds(15)
        access = try KeyStoreAccess(arguments, context: context)
    }

    func run() async throws -> Int32 {
        let client = RedemptionClient(requestTimeout: timeout)
        let token: String
        let trust: TLSTrust
        do {
            token = try readToken()
            trust = backend.trustGiven ? backend.trust : try storedTrust()
        } catch {
            // Nothing was sent; --json still answers on standard output.
            if console.json {
                let code =
                    (error as? CLIFailure)?.code.rawValue ?? (error as? DeviceSigningError)?.code.rawValue ?? "keyStore"
                try console.printJSON(["redeemed": false, "code": code, "message": FetchChannelCLI.describe(error)])
            }
            throw error
        }
        let redeemData = PendingOutOfBandOperation.RedeemData(token: token, redeemUrl: url.description)
        switch await client.redeem(redeemData, trust: trust) {
        case .success(let redeemed):
            if console.json {
                var object = (try JSONOutput.tree(redeemed.body) as? [String: Any]) ?? [:]
                object["redeemed"] = true
                try console.printJSON(object)
            } else {
                // The backend's text without control characters, each field on one line: a line
                // feed in it cannot fake the lines after it (PrintableText.oneLine).
                console.line("op: \(redeemed.op.map(PrintableText.oneLine) ?? "-")")
                console.line("statusCode: \(redeemed.statusCode.map(String.init) ?? "-")")
                console.line("lifetimeMillis: \(redeemed.lifetimeMillis.map(String.init) ?? "-")")
                console.line("uafRequest: \(redeemed.uafRequest.map(PrintableText.oneLine) ?? "-")")
            }
            console.note("Redeemed the token at \(url).")
            return ExitCode.success
        case .failure(let error):
            if console.json {
                var object: [String: Any] = ["redeemed": false, "code": error.code, "message": error.message]
                if let http = error.httpError { object["status"] = http.status }
                try console.printJSON(object)
            }
            throw CLIFailure(.backend, error.message)
        }
    }

    /// The token: TOKEN, or for `-` one line of standard input (its line ending not part of it),
    /// at most a token's longest (``PendingOutOfBandOperation/RedeemData/maximumTokenBytes``).
    /// On a terminal it is refused: standard input is read to its end, not to the end of a line,
    /// and the token would be shown as it is typed.
    private func readToken() throws -> String {
        guard tokenArgument == "-" else { return tokenArgument }
        guard !context.standardInputIsTerminal else {
            throw CLIFailure(
                .unreadableInput,
                "standard input is a terminal, which would show the token as it is typed; pipe it in: "
                    + "printf '%s\\n' \"$TOKEN\" | fetchchannel redeem --redeem-url URL -")
        }
        let limit = PendingOutOfBandOperation.RedeemData.maximumTokenBytes
        var line = try context.readStandardInput(limit + 2)
        defer { secureZero(&line) }
        if line.last == UInt8(ascii: "\n") {
            line.removeLast()
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
        }
        guard !line.contains(UInt8(ascii: "\n")) else {
            throw CLIFailure(.unreadableInput, "standard input holds more than one line; give one token")
        }
        guard line.count <= limit else {
            throw CLIFailure(.unreadableInput, "the token on standard input is longer than \(limit) bytes")
        }
        guard !line.isEmpty else { throw CLIFailure(.unreadableInput, "standard input holds no token") }
        guard let token = String(validating: line, as: UTF8.self) else {
            throw CLIFailure(.unreadableInput, "the token on standard input is not UTF-8 text")
        }
        return token
    }

    /// The trust stored with the registrations whose backend holds the redeem URL (the operation
    /// came from one of them), chosen as the library chooses (``RedeemURLTrust``); otherwise (no
    /// such registration, or no key store) the system CAs. A store that cannot be read is an
    /// error: its registrations may hold a CA file and pins that the system CAs would silently
    /// replace. So are registrations of that backend that disagree on its trust.
    private func storedTrust() throws -> TLSTrust {
        guard try access.exists() else { return .system }
        var backends: [(origin: BackendOrigin, trust: TLSTrust)] = []
        for record in try access.open(create: false).list() where record.dispatchTargetId != nil {
            guard let origin = record.server.flatMap(URL.init(string:)).flatMap(BackendOrigin.init(url:)),
                origin.contains(url.url)
            else { continue }
            backends.append((origin, try BackendTrustOptions.stored(record)))
        }
        switch RedeemURLTrust.choose(for: url.url, among: backends) {
        case .success(let trust):
            return trust
        case .failure(let ambiguity):
            throw CLIFailure(
                .keyStore, "cannot choose the TLS trust for \(url): \(ambiguity.detail); or pass --ca-file/--pin")
        }
    }
}

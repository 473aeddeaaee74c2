import DeviceSigning
import FetchChannelEmulator
import FetchChannelWire
import Foundation

/// `fetchchannel serve`: the reference backend in the foreground until SIGINT, SIGTERM or SIGHUP.
struct ServeCommand: CLICommand {
    static let host = Option(
        "host", "HOST", help: "The loopback address to listen on: 127.0.0.1 (default) or ::1.", .nonEmpty)
    static let port = Option("port", "PORT", help: "The port; 0 (default) picks a free one.", .integer(in: 0...65_535))
    static let tolerance = Option(
        "tolerance-seconds", "S", help: "Allowed difference between the device's and the server's clock (default: 60).",
        .decimal(in: 0...86_400))
    static let clockOffset = Option(
        "clock-offset-seconds", "S",
        help: "Run the server clock this far ahead (negative: behind) to provoke clock skew (default: 0).",
        .decimal(in: -315_360_000...315_360_000))
    static let tls = Flag(
        "tls",
        help: "Serve https with a CA and certificate generated at start (trust the CA file it prints, or pin the key).")
    static let tlsCertificate = Option(
        "tls-cert", "FILE", help: "Serve https with this PEM certificate chain (leaf first); needs --tls-key.",
        .nonEmpty)
    static let tlsKey = Option(
        "tls-key", "FILE", help: "The unencrypted PEM P-256 private key of --tls-cert.", .nonEmpty)
    static let jweAlgorithm = Option(
        "jwe-alg", "A",
        help: "The JWE key management of operations answers asked for with Accept: \(WireMediaType.jose): "
            + "\(EncryptCommand.algorithmNames) (default: ECDH-ES).", ValueParser<JWE.Algorithm>.cases)
    static let jweEncryption = Option(
        "jwe-enc", "E",
        help: "The JWE content encryption of those answers: \(EncryptCommand.encryptionNames) (default: A256GCM).",
        ValueParser<JWE.ContentEncryption>.cases)

    static let spec = CommandSpec(
        path: ["serve"],
        abstract: "Run the reference backend (the emulator of the backend's device endpoints) on loopback.",
        discussion:
            "Prints its base URL on standard output as soon as it listens, then serves until SIGINT (Ctrl-C), SIGTERM or SIGHUP (a closed terminal) and stops cleanly (exit 0). Device endpoints under \(WirePaths.basePath), the emulator's control API under \(WirePaths.Emulator.root) (dispatch, clock, faults, stats). Plain HTTP unless --tls, loopback only: a request whose Host is not loopback gets 421, a request body that is not \(WireMediaType.json) gets 415, and a further dispatch target of a known device needs a Device-Signature of that device (trust on first use). --json prints {\"url\", \"toleranceSeconds\", \"clockOffsetSeconds\"} instead of the bare URL."
            + " --tls serves https with a P-256 CA and a certificate for 127.0.0.1, ::1 and localhost made at"
            + " start: the CA certificate is written to a temporary file (removed on stop) whose path is shown"
            + " with the certificate's pin (sha256//…) on standard error, and --json adds \"caFile\" and"
            + " \"pin\". --tls-cert and --tls-key serve your own certificate chain and P-256 key (PEM) instead"
            + " (caFile null).",
        options: [
            host, port, tolerance, clockOffset, tls, tlsCertificate, tlsKey, jweAlgorithm, jweEncryption,
            CommonOptions.json,
        ]
    )

    let console: Console
    let configuration: ReferenceBackend.Configuration
    let tolerance: Double
    let clockOffset: Double
    let tlsChoice: ReferenceBackend.TLS?

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        console = Console(arguments, context: context)
        let host = try arguments[Self.host] ?? "127.0.0.1"
        let port = try arguments[Self.port] ?? 0
        tolerance = try arguments[Self.tolerance] ?? 60
        clockOffset = try arguments[Self.clockOffset] ?? 0
        var configuration = ReferenceBackend.Configuration(
            host: host, port: Int(port), toleranceMillis: Int64((tolerance * 1000).rounded()),
            clockOffsetMillis: Int64((clockOffset * 1000).rounded()))
        tlsChoice = try Self.tlsChoice(arguments, context: context)
        if let algorithm = try arguments[Self.jweAlgorithm] { configuration.jweAlgorithm = algorithm }
        if let encryption = try arguments[Self.jweEncryption] { configuration.jweEncryption = encryption }
        self.configuration = configuration
    }

    /// `--tls` (generated), `--tls-cert` with `--tls-key` (files), or plain HTTP.
    private static func tlsChoice(
        _ arguments: ParsedArguments, context: CLIContext
    ) throws(UsageError) -> ReferenceBackend.TLS? {
        switch (try arguments[tlsCertificate], try arguments[tlsKey]) {
        case (let certificate?, let key?):
            return .files(certificate: try context.fileURL(certificate).path, key: try context.fileURL(key).path)
        case (nil, nil):
            return arguments[tls] ? .generated : nil
        default:
            throw UsageError(
                .conflictingOptions,
                "--tls-cert and --tls-key go together: give both, or --tls alone for a generated certificate")
        }
    }

    func run() async throws -> Int32 {
        let (backend, caFile) = try start()
        defer { caFile?.remove() }
        let received = await SignalWaiter.waitForTermination {
            announce(backend, caFile: caFile)
            // A URL nobody can read serves no one: stop now, rather than run until a signal.
            return !console.standardOutput.hasFailed
        }
        backend.stop()
        guard let received else { throw CLIFailure(.refusedOutput, "cannot write to standard output") }
        let name = received == SIGINT ? "SIGINT" : received == SIGHUP ? "SIGHUP" : "SIGTERM"
        console.note("Received \(name); the reference backend stopped.")
        return ExitCode.success
    }

    /// The backend, listening, and the file its generated CA certificate was written to.
    private func start() throws -> (ReferenceBackend, ServedCertificateAuthorityFile?) {
        let backend: ReferenceBackend
        do {
            backend = try ReferenceBackend.start(configuration, tls: tlsChoice)
        } catch {
            // The library's reason names its own setting (allowNonLoopback), which serve does not
            // offer; other reasons are said as they are, without the error type's name.
            let serverError = error as? HTTPServerError
            let reason =
                serverError?.code == .nonLoopbackHost
                ? "\(configuration.host) is not a loopback address, and serve listens on loopback only: "
                    + "give --host 127.0.0.1 (the default) or --host ::1"
                : serverError.map(Self.words) ?? "\(error)"
            throw CLIFailure(
                .backend,
                "cannot start the reference backend on \(configuration.host) port \(configuration.port): \(reason)")
        }
        do {
            return (backend, try backend.tlsCertificateAuthorityPEM.map(ServedCertificateAuthorityFile.init(pem:)))
        } catch {
            backend.stop()
            throw error
        }
    }

    /// A server error as a person reads it: its reason, and the system's words for its errno.
    private static func words(_ error: HTTPServerError) -> String {
        guard let code = error.systemErrno else { return error.reason }
        return "\(error.reason) (\(String(cString: strerror(code))))"
    }

    /// The base URL (or the JSON object) on standard output, and how to stop and trust it.
    private func announce(_ backend: ReferenceBackend, caFile: ServedCertificateAuthorityFile?) {
        let url = backend.baseURL.absoluteString
        var object: [String: Any] = ["url": url, "toleranceSeconds": tolerance, "clockOffsetSeconds": clockOffset]
        if let pin = backend.tlsPin {
            object["caFile"] = JSONOutput.orNull(caFile?.path)
            object["pin"] = pin
        }
        if console.json, let text = try? JSONOutput.text(object) {
            console.line(text)
        } else {
            console.line(url)
        }
        console.note(
            "Reference backend listening on \(url) (tolerance \(DecimalText.format(tolerance)) s, clock offset "
                + "\(DecimalText.format(clockOffset)) s). Stop with Ctrl-C, SIGTERM or SIGHUP.")
        if let pin = backend.tlsPin {
            let trust = caFile.map { "CA certificate \($0.path) (removed on stop)" } ?? "your certificate"
            console.note("TLS: trust \(trust); server key pin \(pin)")
        }
    }
}

import DeviceSigning
import FetchChannelEmulator
import FetchChannelWire
import Foundation

/// `fetchchannel serve`: the reference backend in the foreground until SIGINT or SIGTERM.
enum ServeCommand {
    static let all = [serve]

    static let serve = Command(
        spec: CommandSpec(
            path: ["serve"],
            abstract: "Run the reference backend (the emulator of the backend's device endpoints) on loopback.",
            discussion:
                "Prints its base URL on standard output as soon as it listens, then serves until SIGINT (Ctrl-C) or SIGTERM and stops cleanly (exit 0). Device endpoints under \(WirePaths.basePath), the emulator's control API under \(WirePaths.Emulator.root) (dispatch, clock, faults, stats). Plain HTTP unless --tls, loopback only: a request whose Host is not loopback gets 421, a request body that is not \(WireMediaType.json) gets 415, and a further dispatch target of a known device needs a Device-Signature of that device (trust on first use). --json prints {\"url\", \"toleranceSeconds\", \"clockOffsetSeconds\"} instead of the bare URL."
                + " --tls serves https with a P-256 CA and a certificate for 127.0.0.1, ::1 and localhost made at"
                + " start: the CA certificate is written to a temporary file (removed on stop) whose path is shown"
                + " with the certificate's pin (sha256//…) on standard error, and --json adds \"caFile\" and"
                + " \"pin\". --tls-cert and --tls-key serve your own certificate chain and P-256 key (PEM) instead"
                + " (caFile null).",
            options: [
                .value("host", "HOST", help: "The loopback address to listen on: 127.0.0.1 (default) or ::1."),
                .value("port", "PORT", help: "The port; 0 (default) picks a free one."),
                .value(
                    "tolerance-seconds", "S",
                    help: "Allowed difference between the device's and the server's clock (default: 60)."),
                .value(
                    "clock-offset-seconds", "S",
                    help: "Run the server clock this far ahead (negative: behind) to provoke clock skew (default: 0)."),
                .flag(
                    "tls",
                    help: "Serve https with a CA and certificate generated at start "
                        + "(trust the CA file it prints, or pin the key)."),
                .value(
                    "tls-cert", "FILE",
                    help: "Serve https with this PEM certificate chain (leaf first); needs --tls-key."),
                .value("tls-key", "FILE", help: "The unencrypted PEM P-256 private key of --tls-cert."),
                .value(
                    "jwe-alg", "A",
                    help: "The JWE key management of operations answers asked for with Accept: "
                        + "\(WireMediaType.jose): \(EncryptionCommands.algorithms.joined(separator: ", ")) (default: ECDH-ES)."
                ),
                .value(
                    "jwe-enc", "E",
                    help: "The JWE content encryption of those answers: "
                        + "\(EncryptionCommands.encryptions.joined(separator: ", ")) (default: A256GCM)."),
                CommonOptions.json.spec,
            ]
        )
    ) { invocation in
        let arguments = invocation.arguments
        let host = try arguments.nonEmpty("host") ?? "127.0.0.1"
        let port = try arguments.integer("port", in: 0...65_535) ?? 0
        let tolerance = try arguments.decimal("tolerance-seconds", in: 0...86_400) ?? 60
        let offset = try arguments.decimal("clock-offset-seconds", in: -315_360_000...315_360_000) ?? 0
        var configuration = ReferenceBackend.Configuration(
            host: host, port: Int(port), toleranceMillis: Int64((tolerance * 1000).rounded()),
            clockOffsetMillis: Int64((offset * 1000).rounded()))
        let tls = try tlsChoice(arguments)
        if let alg = try arguments.choice("jwe-alg", from: EncryptionCommands.algorithms).flatMap(JWE.Algorithm.init) {
            configuration.jweAlgorithm = alg
        }
        let encryptions = EncryptionCommands.encryptions
        if let enc = try arguments.choice("jwe-enc", from: encryptions).flatMap(JWE.ContentEncryption.init) {
            configuration.jweEncryption = enc
        }
        let backend: ReferenceBackend
        do {
            backend = try ReferenceBackend.start(configuration, tls: tls)
        } catch {
            throw CLIFailure("cannot start the reference backend on \(host) port \(port): \(error)")
        }
        let caFile: ServedCertificateAuthorityFile?
        do {
            caFile = try backend.tlsCertificateAuthorityPEM.map(ServedCertificateAuthorityFile.init(pem:))
        } catch {
            backend.stop()
            throw error
        }
        defer { caFile?.remove() }
        let url = backend.baseURL.absoluteString
        let received = await SignalWaiter.waitForTermination {
            var object: [String: Any] = ["url": url, "toleranceSeconds": tolerance, "clockOffsetSeconds": offset]
            if let pin = backend.tlsPin {
                object["caFile"] = JSONOutput.orNull(caFile?.path)
                object["pin"] = pin
            }
            if invocation.json, let text = try? JSONOutput.text(object) {
                invocation.standardOutput.line(text)
            } else {
                invocation.standardOutput.line(url)
            }
            invocation.note(
                "Reference backend listening on \(url) (tolerance \(format(tolerance)) s, clock offset \(format(offset)) s). Stop with Ctrl-C or SIGTERM."
            )
            if let pin = backend.tlsPin {
                let trust = caFile.map { "CA certificate \($0.path) (removed on stop)" } ?? "your certificate"
                invocation.note("TLS: trust \(trust); server key pin \(pin)")
            }
        }
        backend.stop()
        invocation.note("Received \(received == SIGINT ? "SIGINT" : "SIGTERM"); the reference backend stopped.")
        return ExitCode.success
    }

    /// `--tls` (generated), `--tls-cert` with `--tls-key` (files), or plain HTTP.
    private static func tlsChoice(_ arguments: ParsedArguments) throws -> ReferenceBackend.TLS? {
        switch (try arguments.nonEmpty("tls-cert"), try arguments.nonEmpty("tls-key")) {
        case (let certificate?, let key?):
            return .files(certificate: certificate, key: key)
        case (nil, nil):
            return arguments.flag("tls") ? .generated : nil
        default:
            throw UsageError(
                "--tls-cert and --tls-key go together: give both, or --tls alone for a generated certificate")
        }
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

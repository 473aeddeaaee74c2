import DeviceSigning
import FetchChannel
import Foundation

/// A backend as a command line names it, parsed once: the server URL (`--server`, or `redeem`'s
/// `--redeem-url`) and how its TLS certificate is checked (`--ca-file`, `--pin`; see
/// `BackendTrustOptions`).
struct BackendOptions: Sendable {
    let server: BackendURL
    /// The trust the options ask for: the system CAs when neither `--ca-file` nor `--pin` is given.
    let trust: TLSTrust
    /// The absolute path of `--ca-file`, as `register` stores it.
    let caFile: String?
    /// The `--pin` values, in order, each once.
    let pins: [String]

    /// Whether `--ca-file` or `--pin` was given.
    var trustGiven: Bool { caFile != nil || !pins.isEmpty }

    /// The parse step's part: the required `server` option, then `--ca-file` and `--pin`, which
    /// apply to https:// servers only.
    init(_ arguments: ParsedArguments, server: Option<BackendURL>, context: CLIContext) throws(UsageError) {
        self.server = try arguments.required(server)
        if let path = try arguments[BackendTrustOptions.caFile] {
            caFile = try context.fileURL(path).path
        } else {
            caFile = nil
        }
        // A pin given twice is one pin: stored and shown once, as `key show` lists what is checked.
        var seen: Set<String> = []
        pins = try arguments.values(of: BackendTrustOptions.pin).filter { seen.insert($0).inserted }
        guard caFile != nil || !pins.isEmpty else {
            trust = .system
            return
        }
        guard self.server.url.scheme == "https" else {
            throw UsageError(
                .conflictingOptions,
                "--ca-file and --pin apply to https:// servers only; \(self.server) is plain http")
        }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw UsageError(
                .invalidValue, "cannot read the CA file \(caFile); --ca-file needs a PEM file of CA certificates")
        }
        // libcurl opens it for every connection and would wait for ever on a FIFO without a writer.
        // A symbolic link to a regular file is one (system bundles and mounted secrets are links).
        var info = stat()
        if let caFile, stat(caFile, &info) != 0 || info.st_mode & S_IFMT != S_IFREG {
            throw UsageError(
                .invalidValue,
                "the CA file \(caFile) is not a regular file; --ca-file needs a PEM file of CA certificates")
        }
        do throws(TLSTrustError) {
            trust = try BackendTrustOptions.trust(caFile: caFile, pins: pins)
        } catch {
            throw UsageError(.invalidValue, error.reason)
        }
    }
}

import DeviceSigning
import FetchChannel
import Foundation

/// `--ca-file FILE` and `--pin sha256//…`: how a backend's TLS certificate is checked, beside the
/// chain to the system CAs. `register` checks them on its own request and stores them with the
/// key's registration; `fetch`, `rotate` and `redeem` use what is stored; `skew` takes them too.
enum BackendTrustOptions {
    static let caFile = Option(
        "ca-file", "FILE",
        help: "A PEM bundle of the private CA(s) the backend's certificate must chain to, instead of the system CAs.")
    static let pin = Option(
        "pin", "sha256//BASE64",
        help: "An SPKI pin the backend's certificate must also match (repeatable; any one matches).",
        repeatable: true, .text)
    static let all: [any OptionDeclaration] = [caFile, pin]

    /// What the arguments ask for: the trust, and the absolute CA path and pins to store.
    static func parse(
        _ arguments: ParsedArguments, context: CLIContext, server: BackendURL
    ) throws(UsageError) -> (trust: TLSTrust, caFile: String?, pins: [String]) {
        let path = try arguments[caFile].map { context.fileURL($0).path }
        let pins = try arguments.values(of: pin)
        guard path != nil || !pins.isEmpty else { return (.system, nil, []) }
        guard server.url.scheme == "https" else {
            throw UsageError(
                .conflictingOptions, "--ca-file and --pin apply to https:// servers only; \(server) is plain http")
        }
        if let path, !FileManager.default.isReadableFile(atPath: path) {
            throw UsageError(
                .invalidValue, "cannot read the CA file \(path); --ca-file needs a PEM file of CA certificates")
        }
        do throws(TLSTrustError) {
            return (try trust(caFile: path, pins: pins), path, pins)
        } catch {
            throw UsageError(.invalidValue, error.reason)
        }
    }

    /// The trust stored with a key's registration (the system CAs when nothing was stored).
    static func stored(_ metadata: KeyMetadata) throws -> TLSTrust {
        do throws(TLSTrustError) {
            return try trust(caFile: metadata.serverCAFile, pins: metadata.serverPins ?? [])
        } catch {
            throw CLIFailure(.keyStore, "key \(metadata.keyId) stores an unusable TLS trust: \(error.reason)")
        }
    }

    private static func trust(caFile: String?, pins: [String]) throws(TLSTrustError) -> TLSTrust {
        guard let caFile else { return try TLSTrust(anchors: .system, pins: pins) }
        return try TLSTrust.caFile(caFile, pins: pins)
    }
}

import DeviceSigning
import FetchChannel
import Foundation

/// `--ca-file FILE` and `--pin sha256//…`: how a backend's TLS certificate is checked, beside the
/// chain to the system CAs. `register` checks them on its own request and stores them with the
/// key's registration; `fetch`, `rotate` and `redeem` use what is stored; `skew` takes them too.
enum BackendTrustOptions {
    static let caFile = Option(
        "ca-file", "FILE",
        help: "A PEM bundle of the private CA(s) the backend's certificate must chain to, instead of the system CAs.",
        .nonEmpty)
    static let pin = Option(
        "pin", "sha256//BASE64",
        help: "An SPKI pin the backend's certificate must also match (repeatable; any one matches).",
        repeatable: true, .text)
    static let all: [any OptionDeclaration] = [caFile, pin]

    /// The trust stored with a key's registration (the system CAs when nothing was stored).
    static func stored(_ metadata: KeyMetadata) throws -> TLSTrust {
        do throws(TLSTrustError) {
            return try trust(caFile: metadata.serverCAFile, pins: metadata.serverPins ?? [])
        } catch {
            throw CLIFailure(.keyStore, "key \(metadata.keyId) stores an unusable TLS trust: \(error.reason)")
        }
    }

    static func trust(caFile: String?, pins: [String]) throws(TLSTrustError) -> TLSTrust {
        guard let caFile else { return try TLSTrust(anchors: .system, pins: pins) }
        return try TLSTrust.caFile(caFile, pins: pins)
    }
}

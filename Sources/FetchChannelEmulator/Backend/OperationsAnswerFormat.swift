import FetchChannelWire
import Foundation

/// The media type of an operations answer, chosen from the request's `Accept` field
/// (docs/ARCHITECTURE.md, "Encrypted answers"): the vendor's clients ask for
/// `application/jose;charset=UTF-8` and get a JWE; curl and the README ask for JSON, or send
/// `*/*` or no Accept at all, and get plain JSON.
enum OperationsAnswerFormat: Equatable {
    case json
    case jose

    static let joseContentType = WireMediaType.joseUTF8

    /// The format `accept` (every Accept field of the request) asks for, nil when it names
    /// neither. JOSE wins when both are acceptable and the target has an encryption key; a
    /// media range with `q=0` is not acceptable.
    static func negotiate(accept: [String], targetHasEncryptionKey: Bool) -> OperationsAnswerFormat? {
        guard !accept.isEmpty else { return .json }
        var acceptsJSON = false
        var acceptsJOSE = false
        for range in accept.flatMap({ $0.split(separator: ",") }) {
            let parts = range.split(separator: ";").map { $0.filter { $0 != " " && $0 != "\t" }.lowercased() }
            guard let mediaType = parts.first, !mediaType.isEmpty else { continue }
            let refused = parts.dropFirst().contains { $0.hasPrefix("q=") && Double($0.dropFirst(2)) == 0 }
            if refused { continue }
            switch mediaType {
            case WireMediaType.jose: acceptsJOSE = true
            case WireMediaType.json, WireMediaType.anyApplication, WireMediaType.any: acceptsJSON = true
            default: break
            }
        }
        if acceptsJOSE && targetHasEncryptionKey { return .jose }
        return acceptsJSON ? .json : nil
    }
}

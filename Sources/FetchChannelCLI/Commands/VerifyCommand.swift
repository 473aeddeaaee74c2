import DeviceSigning
import Foundation

/// `fetchchannel verify`: checks a compact ES256 JWS (such as a Device-Signature) with a public key.
struct VerifyCommand: CompactCheckCommand {
    static let keyFile = Option(
        "public-key", "FILE", help: "The public key: PEM (PUBLIC KEY) or a JWK.", required: true, .nonEmpty)

    static let serialization = CompactCheck.Serialization.jws

    static let spec = checkSpec(
        path: ["verify"],
        abstract: "Verify a compact ES256 JWS (such as a Device-Signature) with a public key; print its payload.",
        discussion:
            "Strict: three parts of unpadded base64url, alg exactly ES256, a 64-byte r||s signature, at most 16 KiB. Exit 0 and the payload on standard output when the signature verifies; exit 1 and the reason on standard error when not. Freshness and replay are the backend's checks, not made here. --json prints {\"valid\", \"header\", \"payload\"} (a payload that is not UTF-8 text as \"payloadBase64url\"; on failure {\"valid\": false, \"code\", \"reason\"}).",
    )

    let check: CompactCheck

    /// The payload, once the signature verifies; printed with a line ending.
    static func open(_ compact: String, with key: P256.Signing.PublicKey) throws -> CompactCheck.Passed {
        let jws = try CompactJWS(parsing: compact)
        let payload = try jws.verifiedPayload(with: key)
        let header: [String: Any?] = ["alg": jws.header.alg, "kid": jws.header.kid, "typ": jws.header.typ]
        return CompactCheck.Passed(header: header, content: payload, endsLine: true)
    }
}

import DeviceSigning
import Foundation

/// `fetchchannel decrypt`: opens a compact JWE (ECDH-ES on P-256) as `fetch` opens the backend's
/// encrypted answers (docs/ARCHITECTURE.md, "Encrypted answers").
struct DecryptCommand: CompactCheckCommand {
    static let keyFile = Option(
        "private-key", "FILE", help: "The recipient's private key: PEM or a private JWK.", required: true,
        .nonEmpty)

    static let serialization = CompactCheck.Serialization.jwe

    static let spec = checkSpec(
        path: ["decrypt"],
        abstract: "Decrypt a compact JWE (ECDH-ES on P-256) with a private key; print the plaintext.",
        discussion: "Strict: five parts of unpadded base64url, alg and enc from the lists of 'encrypt', an epk on "
            + "P-256, no zip, crit or duplicate header members, exact IV, tag and key lengths, at most 1 MiB. Exit 0 "
            + "and the plaintext, byte for byte, on standard output; exit 1 and the reason on standard error when it "
            + "does not decrypt. The key file is an unencrypted PEM (PRIVATE KEY or EC PRIVATE KEY) or a private JWK. "
            + "--json prints {\"decrypted\", \"header\", \"plaintext\"} (a plaintext that is not UTF-8 text as "
            + "\"plaintextBase64url\"; on failure {\"decrypted\": false, \"code\", \"reason\"}).",
    )

    let check: CompactCheck

    /// The plaintext, byte for byte.
    static func open(_ compact: String, with key: P256.KeyAgreement.PrivateKey) throws -> CompactCheck.Passed {
        let jwe = try CompactJWE(parsing: compact)
        let plaintext = try jwe.plaintext(with: key)
        let header: [String: Any?] = [
            "alg": jwe.header.alg.rawValue, "enc": jwe.header.enc.rawValue, "kid": jwe.header.kid,
        ]
        return CompactCheck.Passed(header: header, content: plaintext)
    }
}

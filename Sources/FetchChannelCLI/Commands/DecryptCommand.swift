import DeviceSigning
import Foundation

/// `fetchchannel decrypt`: opens a compact JWE (ECDH-ES on P-256) as `fetch` opens the backend's
/// encrypted answers (docs/ARCHITECTURE.md, "Encrypted answers").
struct DecryptCommand: CLICommand {
    static let privateKey = Option(
        "private-key", "FILE", help: "The recipient's private key: PEM or a private JWK.", required: true)

    static let spec = CommandSpec(
        path: ["decrypt"],
        abstract: "Decrypt a compact JWE (ECDH-ES on P-256) with a private key; print the plaintext.",
        discussion: "Strict: five parts of unpadded base64url, alg and enc from the lists of 'encrypt', an epk on "
            + "P-256, no zip, crit or duplicate header members, exact IV, tag and key lengths, at most 1 MiB. Exit 0 "
            + "and the plaintext, byte for byte, on standard output; exit 1 and the reason on standard error when it "
            + "does not decrypt. The key file is an unencrypted PEM (PRIVATE KEY or EC PRIVATE KEY) or a private JWK. "
            + "--json prints {\"decrypted\", \"header\", \"plaintext\"} (and on failure {\"decrypted\": false, "
            + "\"code\", \"reason\"}).",
        options: [privateKey, CommonOptions.json],
        positionals: [PositionalSpec("JWE", help: "The compact JWE, or - to read it from standard input.")]
    )

    let check: CompactCheck

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        check = try CompactCheck(
            arguments, keyFile: Self.privateKey, context: context, name: "JWE", maximumLength: CompactJWE.maximumLength,
            verdict: "decrypted", headline: "the JWE does not decrypt")
    }

    func run() async throws -> Int32 {
        let key = try KeyFiles.readPrivateKey(check.keyFile)
        let decrypted = try check.run { compact in
            let jwe = try CompactJWE(parsing: compact)
            return (jwe, try jwe.plaintext(with: key))
        }
        guard let (jwe, plaintext) = decrypted else { return ExitCode.failure }
        var header: [String: Any] = ["alg": jwe.header.alg.rawValue, "enc": jwe.header.enc.rawValue]
        if let kid = jwe.header.kid { header["kid"] = kid }
        return try check.reportPassed(header: header, "plaintext", plaintext, bytes: Array(plaintext))
    }
}

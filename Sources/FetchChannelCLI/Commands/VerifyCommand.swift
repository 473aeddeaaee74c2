import DeviceSigning
import Foundation

/// `fetchchannel verify`: checks a compact ES256 JWS (such as a Device-Signature) with a public key.
struct VerifyCommand: CLICommand {
    static let publicKey = Option(
        "public-key", "FILE", help: "The public key: PEM (PUBLIC KEY) or a JWK.", required: true)

    static let spec = CommandSpec(
        path: ["verify"],
        abstract: "Verify a compact ES256 JWS (such as a Device-Signature) with a public key; print its payload.",
        discussion:
            "Strict: three parts of unpadded base64url, alg exactly ES256, a 64-byte r||s signature, at most 16 KiB. Exit 0 and the payload on standard output when the signature verifies; exit 1 and the reason on standard error when not. Freshness and replay are the backend's checks, not made here. --json prints {\"valid\", \"header\", \"payload\"} (and on failure {\"valid\": false, \"code\", \"reason\"}).",
        options: [publicKey, CommonOptions.json],
        positionals: [PositionalSpec("JWS", help: "The compact JWS, or - to read it from standard input.")]
    )

    let check: CompactCheck

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        check = try CompactCheck(
            arguments, keyFile: Self.publicKey, context: context, name: "JWS", maximumLength: CompactJWS.maximumLength,
            verdict: "valid", headline: "the JWS is not valid")
    }

    func run() async throws -> Int32 {
        let publicKey = try KeyFiles.readPublicKey(check.keyFile)
        let verified = try check.run { compact in
            let jws = try CompactJWS(parsing: compact)
            return (jws, try jws.verifiedPayload(with: publicKey))
        }
        guard let (jws, payload) = verified else { return ExitCode.failure }
        var header: [String: Any] = ["alg": jws.header.alg]
        if let kid = jws.header.kid { header["kid"] = kid }
        if let typ = jws.header.typ { header["typ"] = typ }
        var bytes = Array(payload)
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        return try check.reportPassed(header: header, "payload", payload, bytes: bytes)
    }
}

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

    let console: Console
    let context: CLIContext
    let privateKeyFile: URL
    let compact: String

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        console = Console(arguments, context: context)
        self.context = context
        privateKeyFile = context.fileURL(try arguments.required(Self.privateKey))
        compact = arguments.positionals[0]
    }

    func run() async throws -> Int32 {
        let key = try KeyFiles.readPrivateKey(privateKeyFile)
        let refusal = CompactRefusal(console: console, verdict: "decrypted", headline: "the JWE does not decrypt")
        guard let compact = CompactArgument.read(compact, maximumLength: CompactJWE.maximumLength, context: context)
        else {
            return refusal.report(
                code: DeviceSigningError.Code.inputTooLarge.rawValue,
                reason: "the JWE on standard input is longer than \(CompactJWE.maximumLength) bytes")
        }
        let jwe: CompactJWE
        let plaintext: Data
        do {
            jwe = try CompactJWE(parsing: compact)
            plaintext = try jwe.plaintext(with: key)
        } catch let error as DeviceSigningError {
            return refusal.report(code: error.code.rawValue, reason: error.reason)
        }
        if console.json {
            var header: [String: Any] = ["alg": jwe.header.alg.rawValue, "enc": jwe.header.enc.rawValue]
            if let kid = jwe.header.kid { header["kid"] = kid }
            let value: Any = JSONOutput.parse(plaintext) ?? String(decoding: plaintext, as: UTF8.self)
            try console.printJSON(["decrypted": true, "header": header, "plaintext": value])
        } else {
            console.standardOutput.write(bytes: Array(plaintext))
        }
        return ExitCode.success
    }
}

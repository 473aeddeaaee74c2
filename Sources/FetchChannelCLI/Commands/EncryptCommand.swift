import DeviceSigning
import Foundation

/// `fetchchannel encrypt`: compact JWE with ECDH-ES on P-256, as the backend encrypts answers for
/// `Accept: application/jose` (docs/ARCHITECTURE.md, "Encrypted answers").
struct EncryptCommand: CLICommand {
    /// The key-management algorithms and content encryptions, as help texts list them.
    static let algorithmNames = JWE.Algorithm.allCases.map(\.rawValue).joined(separator: ", ")
    static let encryptionNames = JWE.ContentEncryption.allCases.map(\.rawValue).joined(separator: ", ")

    static let publicKey = Option(
        "public-key", "FILE", help: "The recipient's public key: PEM (PUBLIC KEY) or a JWK.", required: true,
        .nonEmpty)
    static let algorithm = Option(
        "alg", "A", help: "Key management: \(algorithmNames) (default: ECDH-ES).", ValueParser<JWE.Algorithm>.cases)
    static let encryption = Option(
        "enc", "E", help: "Content encryption: \(encryptionNames) (default: A256GCM).",
        ValueParser<JWE.ContentEncryption>.cases)

    static let spec = CommandSpec(
        path: ["encrypt"],
        abstract: "Encrypt standard input to a P-256 public key; print the compact JWE (ECDH-ES).",
        discussion: "Reads the plaintext from standard input and prints a JWE in compact serialization (RFC 7516) "
            + "with a fresh ephemeral key, IV and (for the key-wrap algorithms) content key. The JWE is at most "
            + "1 MiB, so the plaintext is at most about 768 KiB. --json prints {\"jwe\", \"alg\", \"enc\"}.",
        options: [publicKey, algorithm, encryption, CommonOptions.json]
    )

    let console: Console
    let context: CLIContext
    let algorithm: JWE.Algorithm
    let encryption: JWE.ContentEncryption
    let publicKeyFile: URL

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        console = Console(arguments, context: context)
        self.context = context
        algorithm = try arguments[Self.algorithm] ?? .ecdhES
        encryption = try arguments[Self.encryption] ?? .a256GCM
        publicKeyFile = try context.fileURL(try arguments.required(Self.publicKey))
    }

    func run() async throws -> Int32 {
        let recipient = try P256.KeyAgreement.PublicKey(
            x963Representation: KeyFiles.readPublicKey(publicKeyFile).x963Representation)
        var plaintext = try context.readStandardInput(CompactJWE.maximumLength)
        // The secret this command is given: zeroed once it is encrypted, as the library's own are.
        defer { secureZero(&plaintext) }
        let compact = try JWE.encrypt(plaintext, to: recipient, algorithm: algorithm, encryption: encryption)
        if console.json {
            try console.printJSON(["jwe": compact, "alg": algorithm.rawValue, "enc": encryption.rawValue])
        } else {
            console.line(compact)
        }
        return ExitCode.success
    }
}

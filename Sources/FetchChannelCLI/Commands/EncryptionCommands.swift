import DeviceSigning
import Foundation

/// `fetchchannel encrypt` and `fetchchannel decrypt`: compact JWE with ECDH-ES on P-256, as the
/// backend encrypts answers for `Accept: application/jose` (docs/ARCHITECTURE.md, "Encrypted answers").
enum EncryptionCommands {
    static let all = [encrypt, decrypt]

    static let algorithms = JWE.Algorithm.allCases.map(\.rawValue)
    static let encryptions = JWE.ContentEncryption.allCases.map(\.rawValue)

    // MARK: encrypt

    static let encrypt = Command(
        spec: CommandSpec(
            path: ["encrypt"],
            abstract: "Encrypt standard input to a P-256 public key; print the compact JWE (ECDH-ES).",
            discussion: "Reads the plaintext from standard input and prints a JWE in compact serialization (RFC 7516) "
                + "with a fresh ephemeral key, IV and (for the key-wrap algorithms) content key. The JWE is at most "
                + "1 MiB, so the plaintext is at most about 768 KiB. --json prints {\"jwe\", \"alg\", \"enc\"}.",
            options: [
                .value(
                    "public-key", "FILE", help: "The recipient's public key: PEM (PUBLIC KEY) or a JWK.",
                    required: true),
                .value("alg", "ALG", help: "Key management: \(algorithms.joined(separator: ", ")) (default: ECDH-ES)."),
                .value(
                    "enc", "ENC",
                    help: "Content encryption: \(encryptions.joined(separator: ", ")) (default: A256GCM)."),
                CommonOptions.json.spec,
            ]
        )
    ) { invocation in
        let arguments = invocation.arguments
        let alg = try arguments.choice("alg", from: algorithms).flatMap(JWE.Algorithm.init(rawValue:)) ?? .ecdhES
        let enc =
            try arguments.choice("enc", from: encryptions).flatMap(JWE.ContentEncryption.init(rawValue:))
            ?? .a256GCM
        let keyURL = invocation.context.fileURL(arguments.value("public-key") ?? "")
        let recipient = try P256.KeyAgreement.PublicKey(
            x963Representation: SignatureCommands.readPublicKey(keyURL).x963Representation)
        let plaintext = invocation.context.readStandardInput(CompactJWE.maximumLength)
        let compact = try JWE.encrypt(plaintext, to: recipient, algorithm: alg, encryption: enc)
        if invocation.json {
            let object = ["jwe": compact, "alg": alg.rawValue, "enc": enc.rawValue]
            invocation.standardOutput.line(try JSONOutput.text(object))
        } else {
            invocation.standardOutput.line(compact)
        }
        return ExitCode.success
    }

    // MARK: decrypt

    static let decrypt = Command(
        spec: CommandSpec(
            path: ["decrypt"],
            abstract: "Decrypt a compact JWE (ECDH-ES on P-256) with a private key; print the plaintext.",
            discussion: "Strict: five parts of unpadded base64url, alg and enc from the lists of 'encrypt', an epk on "
                + "P-256, no zip, crit or duplicate header members, exact IV, tag and key lengths, at most 1 MiB. Exit 0 "
                + "and the plaintext, byte for byte, on standard output; exit 1 and the reason on standard error when it "
                + "does not decrypt. The key file is an unencrypted PEM (PRIVATE KEY or EC PRIVATE KEY) or a private JWK. "
                + "--json prints {\"decrypted\", \"header\", \"plaintext\"} (and on failure {\"decrypted\": false, "
                + "\"code\", \"reason\"}).",
            options: [
                .value(
                    "private-key", "FILE", help: "The recipient's private key: PEM or a private JWK.", required: true),
                CommonOptions.json.spec,
            ],
            positionals: [PositionalSpec("JWE", help: "The compact JWE, or - to read it from standard input.")]
        )
    ) { invocation in
        let key = try readPrivateKey(invocation.context.fileURL(invocation.arguments.value("private-key") ?? ""))
        var compact = invocation.arguments.positionals[0]
        if compact == "-" {
            let input = invocation.context.readStandardInput(CompactJWE.maximumLength + 2)
            guard input.count <= CompactJWE.maximumLength + 2 else {
                return rejected(
                    invocation, code: DeviceSigningError.Code.inputTooLarge.rawValue,
                    reason: "the JWE on standard input is longer than \(CompactJWE.maximumLength) bytes")
            }
            compact = String(decoding: input, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let jwe: CompactJWE
        let plaintext: Data
        do {
            jwe = try CompactJWE(parsing: compact)
            plaintext = try jwe.plaintext(with: key)
        } catch let error as DeviceSigningError {
            return rejected(invocation, code: error.code.rawValue, reason: error.reason)
        }
        if invocation.json {
            var header: [String: Any] = ["alg": jwe.header.alg.rawValue, "enc": jwe.header.enc.rawValue]
            if let kid = jwe.header.kid { header["kid"] = kid }
            let value: Any = JSONOutput.parse(plaintext) ?? String(decoding: plaintext, as: UTF8.self)
            let object: [String: Any] = ["decrypted": true, "header": header, "plaintext": value]
            invocation.standardOutput.line(try JSONOutput.text(object))
        } else {
            invocation.standardOutput.write(bytes: Array(plaintext))
        }
        return ExitCode.success
    }

    private static func rejected(_ invocation: Invocation, code: String, reason: String) -> Int32 {
        if invocation.json, let text = try? JSONOutput.text(["decrypted": false, "code": code, "reason": reason]) {
            invocation.standardOutput.line(text)
        }
        invocation.standardError.line("Error: the JWE does not decrypt: \(reason)")
        return ExitCode.failure
    }

    /// A key-agreement private key from an unencrypted PEM or a private JWK. The file's bytes are
    /// cleared once the key is built (the PEM text that OpenSSL parses is not ours to clear).
    static func readPrivateKey(_ url: URL) throws -> P256.KeyAgreement.PrivateKey {
        var contents = try BoundedInput.read(url, what: "a key file")
        defer { contents.resetBytes(in: 0..<contents.count) }
        let isJWK = contents.first { !(Character(UnicodeScalar($0)).isWhitespace) } == UInt8(ascii: "{")
        let hasLabel = { (label: String) in contents.range(of: Data("-----BEGIN \(label)-----".utf8)) != nil }
        do {
            if isJWK {
                guard (JSONOutput.parse(contents) as? [String: Any])?["d"] != nil else {
                    throw CLIFailure("\(url.path) holds a public JWK (no \"d\"); decrypting needs the private key")
                }
                return try P256.KeyAgreement.PrivateKey(jwkRepresentation: contents)
            }
            if hasLabel("ENCRYPTED PRIVATE KEY") {
                throw CLIFailure("\(url.path) is encrypted; give an unencrypted copy (openssl pkey -in FILE)")
            }
            if hasLabel("PUBLIC KEY") {
                throw CLIFailure("\(url.path) holds a public key; decrypting needs the private key")
            }
            return try P256.KeyAgreement.PrivateKey(pemRepresentation: String(decoding: contents, as: UTF8.self))
        } catch let error as DeviceSigningError {
            throw CLIFailure("\(url.path) is not a P-256 private key (PEM or private JWK): \(error.reason)")
        }
    }
}

import DeviceSigning
import Foundation

/// The key files `verify`, `encrypt` and `decrypt` are given (outside the key store).
enum KeyFiles {
    /// A public key from a PEM `PUBLIC KEY` file or a JWK (a private JWK's public part is used).
    static func readPublicKey(_ url: URL) throws -> P256.Signing.PublicKey {
        let data = try BoundedInput.read(url, what: "a key file")
        let text = String(decoding: data, as: UTF8.self)
        do {
            if text.drop(while: \.isWhitespace).hasPrefix("{") {
                return try JWK(jsonRepresentation: data).publicKey()
            }
            if text.contains("PRIVATE KEY-----") {
                throw CLIFailure(
                    .unreadableInput,
                    "\(url.path) holds a private key; give the public key ('fetchchannel key export KEYID' prints it)")
            }
            return try P256.Signing.PublicKey(pemRepresentation: text)
        } catch let error as DeviceSigningError {
            throw CLIFailure(
                .unreadableInput, "\(url.path) is not a P-256 public key (PEM PUBLIC KEY or JWK): \(error.reason)")
        }
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
                    throw CLIFailure(
                        .unreadableInput, "\(url.path) holds a public JWK (no \"d\"); decrypting needs the private key")
                }
                return try P256.KeyAgreement.PrivateKey(jwkRepresentation: contents)
            }
            if hasLabel("ENCRYPTED PRIVATE KEY") {
                throw CLIFailure(
                    .unreadableInput, "\(url.path) is encrypted; give an unencrypted copy (openssl pkey -in FILE)")
            }
            if hasLabel("PUBLIC KEY") {
                throw CLIFailure(.unreadableInput, "\(url.path) holds a public key; decrypting needs the private key")
            }
            return try P256.KeyAgreement.PrivateKey(pemRepresentation: String(decoding: contents, as: UTF8.self))
        } catch let error as DeviceSigningError {
            throw CLIFailure(
                .unreadableInput, "\(url.path) is not a P-256 private key (PEM or private JWK): \(error.reason)")
        }
    }
}

/// A key type a command reads from a key file it is given.
protocol KeyFileContents {
    init(readingKeyFile file: URL) throws
}

extension P256.Signing.PublicKey: KeyFileContents {
    init(readingKeyFile file: URL) throws { self = try KeyFiles.readPublicKey(file) }
}

extension P256.KeyAgreement.PrivateKey: KeyFileContents {
    init(readingKeyFile file: URL) throws { self = try KeyFiles.readPrivateKey(file) }
}

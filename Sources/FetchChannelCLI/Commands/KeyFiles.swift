import DeviceSigning
import Foundation

/// The key files `verify`, `encrypt` and `decrypt` are given (outside the key store).
enum KeyFiles {
    /// A public key from a PEM `PUBLIC KEY` file or a JWK (a private JWK's public part is used).
    /// The file may hold a private key by mistake: it is read as bytes, cleared when done, and
    /// made a string only once it is known to hold no private key.
    static func readPublicKey(_ url: URL) throws -> P256.Signing.PublicKey {
        var data = try BoundedInput.read(url, what: "a key file")
        defer { data.resetBytes(in: 0..<data.count) }
        do {
            if isJSONObject(data) {
                return try JWK(jsonRepresentation: data).publicKey()
            }
            if data.range(of: Data("PRIVATE KEY-----".utf8)) != nil {
                throw CLIFailure(
                    .unreadableInput,
                    "\(url.path) holds a private key; give the public key ('fetchchannel key export KEYID' prints it)")
            }
            // Only a PEM public key becomes text: a file without one (a private key in DER, say) is
            // refused as it is.
            guard hasPEMLabel("PUBLIC KEY", in: data) else {
                throw CLIFailure(
                    .unreadableInput,
                    "\(url.path) is not a P-256 public key (PEM PUBLIC KEY or JWK): it holds no PEM PUBLIC KEY block")
            }
            return try P256.Signing.PublicKey(pemRepresentation: String(decoding: data, as: UTF8.self))
        } catch let error as DeviceSigningError {
            throw CLIFailure(
                .unreadableInput, "\(url.path) is not a P-256 public key (PEM PUBLIC KEY or JWK): \(error.reason)")
        }
    }

    /// A key-agreement private key from an unencrypted PEM or a private JWK. The file's bytes are
    /// cleared once the key is built, and the PEM reaches OpenSSL as `SecureBytes`.
    static func readPrivateKey(_ url: URL) throws -> P256.KeyAgreement.PrivateKey {
        var contents = try BoundedInput.read(url, what: "a key file")
        defer { contents.resetBytes(in: 0..<contents.count) }
        do {
            if isJSONObject(contents) {
                return try privateKey(
                    jwk: contents, in: url, needs: "decrypting needs the private key",
                    P256.KeyAgreement.PrivateKey.init(jwkRepresentation:))
            }
            if hasPEMLabel("ENCRYPTED PRIVATE KEY", in: contents) {
                throw CLIFailure(
                    .unreadableInput, "\(url.path) is encrypted; give an unencrypted copy (openssl pkey -in FILE)")
            }
            if hasPEMLabel("PUBLIC KEY", in: contents) {
                throw CLIFailure(.unreadableInput, "\(url.path) holds a public key; decrypting needs the private key")
            }
            return try P256.KeyAgreement.PrivateKey(pemRepresentation: SecureBytes(contents))
        } catch let error as DeviceSigningError {
            throw CLIFailure(
                .unreadableInput, "\(url.path) is not a P-256 private key (PEM or private JWK): \(error.reason)")
        }
    }
}

extension KeyFiles {
    /// Whether the text's first character that is not white space opens a JSON object (a JWK).
    static func isJSONObject(_ contents: Data) -> Bool {
        contents.first { !(Character(UnicodeScalar($0)).isWhitespace) } == UInt8(ascii: "{")
    }

    /// Whether the text holds a PEM block `-----BEGIN <label>-----`, found in its bytes.
    static func hasPEMLabel(_ label: String, in contents: Data) -> Bool {
        contents.range(of: Data("-----BEGIN \(label)-----".utf8)) != nil
    }

    /// Whether the text holds a PEM private key block that is not encrypted (`PRIVATE KEY`,
    /// `EC PRIVATE KEY`, …: a label that ends in `PRIVATE KEY` but is not `ENCRYPTED PRIVATE KEY`),
    /// found in its bytes.
    static func hasUnencryptedPrivateKeyBlock(in contents: Data) -> Bool {
        let label = Data("PRIVATE KEY-----".utf8)
        let encrypted = Data("ENCRYPTED ".utf8)
        var searchFrom = contents.startIndex
        while let found = contents.range(of: label, in: searchFrom..<contents.endIndex) {
            guard
                let start = contents.index(
                    found.lowerBound, offsetBy: -encrypted.count, limitedBy: contents.startIndex),
                contents[start..<found.lowerBound].elementsEqual(encrypted)
            else { return true }
            searchFrom = found.upperBound
        }
        return false
    }

    /// A private key made by `make` from a JWK; a public JWK (no `d`) is refused as such, saying
    /// what `needs` the private key. Neither reading makes a string of `d` (`JWK.isPublicOnly`).
    static func privateKey<Key>(
        jwk contents: Data, in url: URL, needs: String, _ make: (Data) throws -> Key
    ) throws -> Key {
        do {
            return try make(contents)
        } catch let error as DeviceSigningError {
            if JWK.isPublicOnly(contents) {
                throw CLIFailure(.unreadableInput, "\(url.path) holds a public JWK (no \"d\"); \(needs)")
            }
            throw error
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

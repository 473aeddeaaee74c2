extension P256.Signing.PrivateKey {
    static let encryptedPEMLabel = "ENCRYPTED PRIVATE KEY"

    /// A key from PEM `ENCRYPTED PRIVATE KEY` (PKCS#8 EncryptedPrivateKeyInfo, PBES2), as written
    /// by `encryptedPEMRepresentation(passphrase:kdf:)` or `openssl genpkey ... -aes-256-cbc`.
    ///
    /// Throws `.wrongPassphrase` when the passphrase does not decrypt it; `.malformedEncoding` for
    /// truncated or garbled input or an unsupported scheme; `.inputTooLarge` for a key-derivation
    /// cost above the limits of `KeyDerivation`; `.unsupportedCurve` for an EC key on another
    /// curve; `.unsupportedKeyType` for RSA and other algorithms; `.passphraseRequired` for an
    /// empty passphrase.
    public init(encryptedPEM: String, passphrase: SecureBytes) throws {
        try self.init(encryptedPEM: SecureBytes(encryptedPEM.utf8), passphrase: passphrase)
    }

    /// `init(encryptedPEM:passphrase:)` of text that is read as secret, never made a `String`:
    /// the file it came from may hold more than the encrypted key (the CLI's `key import`).
    package init(encryptedPEM text: SecureBytes, passphrase: SecureBytes) throws {
        let document = try PEM.decodeSecret(text)
        guard document.label == Self.encryptedPEMLabel else {
            throw DeviceSigningError(
                .malformedEncoding,
                "Expected a PEM ENCRYPTED PRIVATE KEY block, found \(document.label); an unencrypted key is read with init(pemRepresentation:)."
            )
        }
        self = try document.der.withUnsafeBytes { try EncryptedPrivateKey.decrypt(der: $0, passphrase: passphrase) }
    }

    /// This key as PEM `ENCRYPTED PRIVATE KEY`: PKCS#8 with PBES2 (`kdf`, a fresh random 16-byte
    /// salt) and AES-256-CBC (a fresh random IV). The result is not secret. It costs one key
    /// derivation (see `KeyDerivation` for the times) and throws `.invalidKeyDerivation` for
    /// parameters outside its limits.
    public func encryptedPEMRepresentation(passphrase: SecureBytes, kdf: KeyDerivation = .default) throws -> String {
        let der = try EncryptedPrivateKey.encrypt(self, passphrase: passphrase, kdf: kdf)
        return PEM.encode(label: Self.encryptedPEMLabel, der: der)
    }

    /// A key from any private-key PEM this package reads, given as secret text: PKCS#8
    /// `ENCRYPTED PRIVATE KEY` (needs `passphrase`), `PRIVATE KEY` or SEC1 `EC PRIVATE KEY`
    /// (`passphrase` unused). With `mustBeEncrypted` (a key store's file whose record says it is
    /// encrypted), an unencrypted key is `.malformedEncoding`: the file was replaced.
    init(privateKeyPEM text: SecureBytes, passphrase: SecureBytes?, mustBeEncrypted: Bool = false) throws {
        let document = try PEM.decodeSecret(text)
        switch document.label {
        case Self.encryptedPEMLabel:
            guard let passphrase else {
                throw DeviceSigningError(
                    .passphraseRequired, "The key is encrypted; a passphrase is needed to open it.")
            }
            self = try document.der.withUnsafeBytes { try EncryptedPrivateKey.decrypt(der: $0, passphrase: passphrase) }
        case "PRIVATE KEY", "EC PRIVATE KEY":
            guard !mustBeEncrypted else {
                throw DeviceSigningError(
                    .malformedEncoding,
                    "The key is not encrypted, but its record says it is; the file was replaced.")
            }
            self = try document.der.withUnsafeBytes { try Self(derRepresentation: $0) }
        case "RSA PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY":
            throw DeviceSigningError(
                .unsupportedKeyType, "Found a PEM \(document.label) block; only ECDSA P-256 keys are supported.")
        default:
            throw DeviceSigningError(
                .malformedEncoding,
                "Expected a PEM ENCRYPTED PRIVATE KEY, PRIVATE KEY or EC PRIVATE KEY block, found \(document.label).")
        }
    }
}

/// A private key as the key store writes it to a file, with the words its record uses for the
/// protection: one rule for the signing key and the encryption key of an entry, so both are
/// always protected the same way (docs/ARCHITECTURE.md, "Invariants", key store).
struct StoredPrivateKey {
    /// The file's text: `TSS2 PRIVATE KEY`, `ENCRYPTED PRIVATE KEY` or (only when allowed) `PRIVATE KEY`.
    let pem: SecureBytes
    /// For `KeyMetadata.kdf`, e.g. `scrypt(N=16384, r=8, p=1), AES-256-CBC`.
    let kdf: String

    /// A TPM-bound key as its TPM blob (no passphrase); otherwise encrypted under `passphrase`
    /// with `kdf`, or, without one, unencrypted if `allowUnencrypted` (else `.passphraseRequired`).
    init(
        _ key: P256.Signing.PrivateKey, passphrase: SecureBytes?, kdf: KeyDerivation,
        allowUnencrypted: Bool
    ) throws {
        if key.isHardwareBound {
            pem = SecureBytes(Array(try key.tss2PEMRepresentation.utf8))
            self.kdf = KeyProtection.tpm2.description
        } else if let passphrase {
            pem = SecureBytes(Array(try key.encryptedPEMRepresentation(passphrase: passphrase, kdf: kdf).utf8))
            self.kdf = "\(kdf), AES-256-CBC"
        } else {
            guard allowUnencrypted else {
                throw DeviceSigningError(
                    .passphraseRequired,
                    "A passphrase is required to save a key. To store it "
                        + "unencrypted (not recommended), pass allowUnencrypted: true.")
            }
            pem = try key.pemRepresentation
            self.kdf = KeyMetadata.unencryptedKDF
        }
    }
}

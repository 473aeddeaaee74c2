extension P256.Signing.PrivateKey {
    /// A key from the text of a key store's `<keyId>.pem`: a TPM-bound key's `TSS2 PRIVATE KEY`,
    /// loaded into the TPM of `tpm`, or any software private-key PEM (see
    /// `init(privateKeyPEM:passphrase:mustBeEncrypted:)`).
    init(storedPEM text: SecureBytes, passphrase: SecureBytes?, tpm: TPMConfiguration, mustBeEncrypted: Bool) throws {
        guard Self.isTSS2PEM(text) else {
            try self.init(privateKeyPEM: text, passphrase: passphrase, mustBeEncrypted: mustBeEncrypted)
            return
        }
        // Not secret: the TPM's wrapped key blob, which only that TPM can load.
        try self.init(tss2PEM: text.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }, tpm: tpm)
    }
}

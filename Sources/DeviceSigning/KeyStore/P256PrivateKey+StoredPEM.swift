extension P256.Signing.PrivateKey {
    /// A key from the text of a key store's `<keyId>.pem`: a TPM-bound key's `TSS2 PRIVATE KEY`,
    /// loaded into the TPM of `tpm`, or any software private-key PEM (see
    /// `init(privateKeyPEM:passphrase:mustBeEncrypted:)`).
    init(storedPEM text: SecureBytes, passphrase: SecureBytes?, tpm: TPMConfiguration, mustBeEncrypted: Bool) throws {
        guard Self.isTSS2PEM(text) else {
            try self.init(privateKeyPEM: text, passphrase: passphrase, mustBeEncrypted: mustBeEncrypted)
            return
        }
        try self.init(tss2Document: PEM.decodeSecret(text), tpm: tpm)
    }
}

extension P256.KeyAgreement.PrivateKey {
    /// Generates a new key inside the TPM of `tpm`: its ECDH runs in the TPM, and its private half
    /// never leaves it (every private export throws `.keyNotExportable`). A `KeyStore` keeps it
    /// as the encryption key of a TPM-bound entry.
    public init(generatingInTPM tpm: TPMConfiguration) throws {
        self.init(try P256.Signing.PrivateKey(generatingInTPM: tpm))
    }
}

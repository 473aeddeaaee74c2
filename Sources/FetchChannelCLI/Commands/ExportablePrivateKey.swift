import DeviceSigning

/// What `key export --private` needs of a key: the signing key and the encryption key of an
/// entry export the same ways under the same rules.
protocol ExportablePrivateKey {
    func jwkRepresentation(includingPrivateKey: Bool) throws -> SecureBytes
    var derRepresentation: SecureBytes { get throws }
    var pemRepresentation: SecureBytes { get throws }
    func encryptedPEMRepresentation(passphrase: SecureBytes, kdf: KeyDerivation) throws -> String
}

extension P256.Signing.PrivateKey: ExportablePrivateKey {}
extension P256.KeyAgreement.PrivateKey: ExportablePrivateKey {}

/// Each entry's encryption key: the P-256 key (ECDH-ES) the backend encrypts the entry's
/// operations answers to, kept in `<keyId>.enc.pem` beside the signing key and protected the same
/// way (docs/ARCHITECTURE.md, "Invariants", key store, and "Encrypted answers").
extension KeyStore {
    /// The encryption key of `keyId`, or nil when the entry has none yet (made before encryption
    /// keys existed; see `addEncryptionKey`). Needs the passphrase of the signing key and throws
    /// the errors of `load`; `.corruptKeyFile` when the file's key is not the one the record names.
    public func loadEncryptionKey(
        _ keyId: String, passphrase: SecureBytes?,
        tpm: TPMConfiguration = .environment
    ) throws -> P256.KeyAgreement.PrivateKey? {
        try Self.checkKeyId(keyId)
        let record = try readMetadata(keyId)
        guard let expected = record.encryptionJWK else { return nil }
        let name = Self.encryptionKeyFile(keyId)
        let key = P256.KeyAgreement.PrivateKey(
            try readPrivateKey(name, passphrase: passphrase, tpm: tpm, record: record))
        guard key.publicKey.jwkThumbprint == expected.thumbprint else {
            throw DeviceSigningError(
                .corruptKeyFile,
                "\(storage.filePath(name)) holds key "
                    + "\(key.publicKey.jwkThumbprint), not the encryption key "
                    + "\(expected.thumbprint) of key \(keyId); the file was replaced.")
        }
        return key
    }

    /// Gives `keyId` an encryption key if it has none, and returns its record (unchanged when it
    /// had one). The new key is protected as the signing key is: generated in the TPM of `tpm` for
    /// a TPM-bound key, which must be the TPM that holds the signing key (it is loaded first);
    /// else encrypted with `passphrase`, which must open the signing key (checked first:
    /// `.passphraseRequired`, `.wrongPassphrase`), or unencrypted for an unencrypted key. `kdf`
    /// nil: the key derivation of the signing key's file (`.default` if the store would not write
    /// that one).
    /// The key file is written before the record that names it, so a failure at any point leaves
    /// the entry as it was.
    @discardableResult
    public func addEncryptionKey(
        _ keyId: String, passphrase: SecureBytes?, kdf: KeyDerivation? = nil,
        tpm: TPMConfiguration = .environment
    ) throws -> KeyMetadata {
        // A delete and a save by another writer can change how the signing key is protected
        // while the new key is prepared (outside the lock: the key derivation is slow). The
        // preparation is then done again against the new entry, once.
        for _ in 0..<2 {
            if let record = try addEncryptionKeyUnlessReplaced(keyId, passphrase: passphrase, kdf: kdf, tpm: tpm) {
                return record
            }
        }
        throw DeviceSigningError(
            .fileSystem, "Key \(keyId) was replaced twice while its encryption key was being made; try again.")
    }

    /// `addEncryptionKey`, or nil when the signing key's file changed between the checks made
    /// here and the write (nothing is written then).
    private func addEncryptionKeyUnlessReplaced(
        _ keyId: String, passphrase: SecureBytes?, kdf: KeyDerivation?, tpm: TPMConfiguration
    ) throws -> KeyMetadata? {
        let current = try metadata(keyId)
        if current.encryptionJWK != nil { return current }
        // The file whose protection the new key copies: read before it is checked, compared
        // again under the lock.
        let signingKeyFile = try storage.readFile(Self.privateKeyFile(keyId))
        let encryptionKey: P256.KeyAgreement.PrivateKey
        var protectingPassphrase: SecureBytes?
        if current.isHardwareBound {
            // Loading the signing key proves that `tpm` is the TPM that holds it; it is released
            // before the new key is made (a TPM without a resource manager holds few objects).
            _ = try load(keyId, passphrase: nil, tpm: tpm)
            encryptionKey = try P256.KeyAgreement.PrivateKey(generatingInTPM: tpm)
        } else {
            // Loading the signing key proves the passphrase and tells whether the entry is encrypted.
            do {
                _ = try load(keyId, passphrase: nil, tpm: tpm)
            } catch let error as DeviceSigningError where error.code == .passphraseRequired && passphrase != nil {
                _ = try load(keyId, passphrase: passphrase, tpm: tpm)
                protectingPassphrase = passphrase
            }
            encryptionKey = try P256.KeyAgreement.PrivateKey()
        }
        let derivation = protectingPassphrase == nil ? KeyDerivation.default : try kdf ?? signingKeyDerivation(keyId)
        let stored = try StoredPrivateKey(
            encryptionKey.material, passphrase: protectingPassphrase, kdf: derivation,
            allowUnencrypted: protectingPassphrase == nil)
        return try storage.withExclusiveLock { () -> KeyMetadata? in
            var record = try readMetadata(keyId)
            if record.encryptionJWK != nil { return record }  // another writer was first
            guard try storage.readFile(Self.privateKeyFile(keyId)).constantTimeEquals(signingKeyFile) else {
                return nil  // replaced since: protected another way, perhaps
            }
            record.encryptionJWK = encryptionKey.publicKey.jwk.withUse("enc")
            let json = try record.encoded()
            try stored.pem.withUnsafeBytes { try storage.writeAtomically(Self.encryptionKeyFile(keyId), contents: $0) }
            try json.withUnsafeBytes { try storage.writeAtomically(Self.metadataFile(keyId), contents: $0) }
            return record
        }
    }

    /// The key derivation that protects the signing key file of `keyId`, read from its PBES2
    /// header, so that a new encryption key is protected the same way; `.default` when the
    /// header names one the store does not write (PBKDF2 with another hash, or below the limits).
    func signingKeyDerivation(_ keyId: String) throws -> KeyDerivation {
        let document = try PEM.decodeSecret(try storage.readFile(Self.privateKeyFile(keyId)))
        guard document.label == P256.Signing.PrivateKey.encryptedPEMLabel else { return .default }
        let derivation: KeyDerivation
        switch try document.der.withUnsafeBytes({ try PBES2Parameters(der: $0) }).kdf {
        case let .scrypt(n, r, p): derivation = .scrypt(n: n, r: r, p: p)
        case let .pbkdf2(iterations, prf) where prf == "SHA-256": derivation = .pbkdf2SHA256(iterations: iterations)
        case .pbkdf2: return .default
        }
        return (try? derivation.validate()) == nil ? .default : derivation
    }

    /// Gives `newKeyId` (an entry without an encryption key) the encryption key of `oldKeyId`: a
    /// byte-for-byte copy of its file, and its public JWK in the record. For a rotation, where the
    /// new signing key keeps the registration's encryption key; the new entry must be protected
    /// as the old one (`.invalidKey` when one is encrypted and the other not, or one is TPM-bound
    /// and the other not) and must not have it as its signing key (`.invalidKey`). Nothing is
    /// loaded into memory or a TPM, so only the kind of protection is compared: that both
    /// entries' passphrase is the same is the caller's to ensure (the CLI's `rotate` protects the
    /// new key with the passphrase that opened the old one). Otherwise the copied key opens only
    /// with the old entry's passphrase. Returns the new record (unchanged when the old entry has
    /// no encryption key); `.keyAlreadyExists` when `newKeyId` has one already.
    @discardableResult
    public func copyEncryptionKey(from oldKeyId: String, to newKeyId: String) throws -> KeyMetadata {
        try Self.checkKeyId(oldKeyId)
        try Self.checkKeyId(newKeyId)
        return try storage.withExclusiveLock {
            let old = try readMetadata(oldKeyId)
            var record = try readMetadata(newKeyId)
            guard let jwk = old.encryptionJWK else { return record }
            guard record.encryptionJWK == nil else {
                throw DeviceSigningError(.keyAlreadyExists, "Key \(newKeyId) has an encryption key already.")
            }
            guard old.isHardwareBound == record.isHardwareBound, old.needsPassphrase == record.needsPassphrase else {
                throw DeviceSigningError(
                    .invalidKey,
                    "Key \(oldKeyId) and key \(newKeyId) are not protected the same way (TPM, "
                        + "passphrase or unencrypted); their encryption key cannot be shared.")
            }
            guard jwk.thumbprint != record.jwk.thumbprint else {
                throw DeviceSigningError(
                    .invalidKey,
                    "The encryption key of key \(oldKeyId) is the signing key of key \(newKeyId); an "
                        + "entry's encryption key must be a key of its own.")
            }
            let file = try storage.readFile(Self.encryptionKeyFile(oldKeyId))
            record.encryptionJWK = jwk
            let json = try record.encoded()
            try file.withUnsafeBytes { try storage.writeAtomically(Self.encryptionKeyFile(newKeyId), contents: $0) }
            try json.withUnsafeBytes { try storage.writeAtomically(Self.metadataFile(newKeyId), contents: $0) }
            return record
        }
    }

    /// An entry's encryption key is its own (never the signing key) and as hardware-bound as it.
    static func checkEncryptionKey(
        _ encryptionKey: P256.KeyAgreement.PrivateKey,
        for signingKey: P256.Signing.PrivateKey
    ) throws {
        guard encryptionKey.publicKey.jwkThumbprint != signingKey.publicKey.jwkThumbprint else {
            throw DeviceSigningError(
                .invalidKey,
                "An entry's encryption key must be a key of its own, not its signing key.")
        }
        guard encryptionKey.isHardwareBound == signingKey.isHardwareBound else {
            throw DeviceSigningError(
                .invalidKey,
                "An entry's encryption key is protected as its signing key is: "
                    + "both in the TPM, or both software keys.")
        }
    }
}

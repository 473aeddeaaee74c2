import Foundation

/// A directory of P-256 signing keys, each kept as two files named by its key id (the RFC 7638
/// JWK thumbprint of the public key):
///
/// - `<keyId>.pem`: the private key, PKCS#8 `ENCRYPTED PRIVATE KEY` (PBES2 with the chosen
///   `KeyDerivation`, AES-256-CBC), readable by `openssl pkey` with the same passphrase; a plain
///   `PRIVATE KEY` only when the caller asked for it with `allowUnencrypted: true`. For a
///   TPM-bound key, its `TSS2 PRIVATE KEY` (useless without that TPM), and the record says
///   `"protection": "tpm2"`.
/// - `<keyId>.enc.pem`: the entry's encryption key (ECDH-ES, never the signing key), protected
///   exactly as `<keyId>.pem`; the record holds its public JWK (`encryptionJWK`). Entries made
///   before encryption keys existed have none until `addEncryptionKey` (at registration).
/// - `<keyId>.json`: the public `KeyMetadata`.
///
/// **A key is present once its `.json` exists.** `save` writes the `.enc.pem`, then the `.pem`,
/// and the `.json` last, each atomically (temporary file, fsync, rename, fsync of the directory); `delete`
/// removes the `.json` first. So a crash at any point never leaves a listed key without its
/// complete private part; it can at most leave an unlisted `.pem`, which `load` still opens and
/// a later `save` of the same key replaces.
///
/// Safety, as OpenSSH does for `~/.ssh`: the directory is created with mode 0700 and refused
/// when it is not owned by the effective user or has any group/other bit; files are created
/// 0600 with `O_EXCL|O_NOFOLLOW` (never chmod-ed) and refused on reading when they are not
/// regular files, are symbolic links, are not owned by the effective user or have any
/// group/other bit. Each refusal says which path and how to fix it. Key ids are checked
/// (43 base64url characters) before they become file names.
///
/// Secrets (passphrases, unencrypted PEM text and DER) stay in `SecureBytes` or zeroed buffers;
/// no error or description contains them.
///
/// Writes take a lock: in the process, and across processes an `flock` on the store's empty
/// `.fetchchannel-lock` file. Reads need none, since files only ever change by atomic rename;
/// opening the store takes the lock without waiting, to remove what a crashed write left.
public final class KeyStore: Sendable, CustomStringConvertible {
    /// The store's directory.
    public let directory: URL
    let storage: KeyStoreDirectory

    /// Opens the store in `directory`, creating it (and missing parents) with mode 0700 when
    /// `createIfMissing`. Throws `.insecureKeyFile` for a directory that is not the user's own
    /// or is open to group or others, and `.fileSystem` when it cannot be opened. Temporary
    /// files of interrupted writes are removed, unless a writer holds the lock now: opening
    /// never waits for one.
    public init(directory: URL, createIfMissing: Bool = true) throws {
        guard directory.isFileURL else {
            throw DeviceSigningError(.fileSystem, "The key store directory must be a file URL; got \(directory).")
        }
        // `..` kept (FilePathText): the store is the directory `ls` would show for this path.
        self.directory = FilePathText.directory(directory)
        storage = try KeyStoreDirectory(path: self.directory.path, createIfMissing: createIfMissing)
        try storage.removeStaleTemporaryFiles(includingEarlierNames: true)
    }

    public var description: String { "KeyStore(\(directory.path))" }

    // MARK: Saving

    /// Saves `key` with `metadata` (made for `key.publicKey`) and returns its key id.
    ///
    /// A TPM-bound key (`key.isHardwareBound`) is stored as its `TSS2 PRIVATE KEY` and needs no
    /// passphrase (`passphrase`, `kdf` and `allowUnencrypted` are not used): the TPM protects it.
    ///
    /// With a `passphrase` the private key is encrypted with `kdf` (this costs one key
    /// derivation: about 0.08 s with the default); without one, `.passphraseRequired` is thrown
    /// unless `allowUnencrypted` is true. Throws `.keyAlreadyExists` when the key is stored
    /// already (use `updateMetadata` or `delete`), `.invalidKey` when `metadata` belongs to
    /// another key, `.invalidKeyDerivation` for a `kdf` outside its limits.
    ///
    /// `encryptionKey`, the entry's own key for encrypted answers, is stored in `<keyId>.enc.pem`
    /// protected exactly as the signing key (a TPM-bound signing key needs a TPM-bound one, a
    /// software key a software one; `.invalidKey` otherwise, or when it is the signing key).
    @discardableResult
    public func save(
        _ key: P256.Signing.PrivateKey, metadata: KeyMetadata, passphrase: SecureBytes?,
        kdf: KeyDerivation = .default, allowUnencrypted: Bool = false,
        encryptionKey: P256.KeyAgreement.PrivateKey? = nil
    ) throws -> String {
        let keyId = key.publicKey.jwkThumbprint
        guard metadata.keyId == keyId, metadata.jwk == key.publicKey.jwk else {
            throw DeviceSigningError(
                .invalidKey, "The metadata describes key \(metadata.keyId), not the key being saved (\(keyId)).")
        }
        var record = metadata
        // What the record says of the stored files is what this call writes, not what `metadata`
        // said of another copy (metadata read from another store names its encryption key).
        record.encryptionJWK = nil
        // Encrypt before taking the lock: the key derivation is the slow part.
        let stored = try StoredPrivateKey(key, passphrase: passphrase, kdf: kdf, allowUnencrypted: allowUnencrypted)
        record.kdf = stored.kdf
        record.protection = key.isHardwareBound ? .tpm2 : nil
        let encryptionPEM = try encryptionKey.map { encryptionKey in
            try Self.checkEncryptionKey(encryptionKey, for: key)
            record.encryptionJWK = encryptionKey.publicKey.jwk.withUse("enc")
            return try StoredPrivateKey(
                encryptionKey.material, passphrase: passphrase, kdf: kdf,
                allowUnencrypted: allowUnencrypted
            ).pem
        }
        let json = try record.encoded()
        try storage.withExclusiveLock {
            guard try !storage.exists(Self.metadataFile(keyId)) else {
                throw DeviceSigningError(
                    .keyAlreadyExists,
                    "Key \(keyId) is already in \(directory.path); update its metadata or delete it first.")
            }
            // Commit order: the private keys, then the record that makes the key present.
            try encryptionPEM?.withUnsafeBytes {
                try storage.writeAtomically(Self.encryptionKeyFile(keyId), contents: $0)
            }
            try stored.pem.withUnsafeBytes { try storage.writeAtomically(Self.privateKeyFile(keyId), contents: $0) }
            try json.withUnsafeBytes { try storage.writeAtomically(Self.metadataFile(keyId), contents: $0) }
        }
        return keyId
    }

    /// Imports a private key PEM as made by `openssl genpkey -algorithm EC -pkeyopt
    /// ec_paramgen_curve:P-256` (PKCS#8 `PRIVATE KEY`, with `-aes-256-cbc` an `ENCRYPTED PRIVATE
    /// KEY`) or by `openssl ecparam -genkey` (SEC1 `EC PRIVATE KEY`), and saves it; returns the
    /// key id. `passphrase` opens an encrypted PEM and protects the stored copy, which is
    /// re-encrypted with `kdf`. Other curves are refused with `.unsupportedCurve`, RSA and other
    /// algorithms with `.unsupportedKeyType`. The text is read from `SecureBytes`, which are
    /// zeroed when released: an unencrypted key in a `String` cannot be (see the `String` form).
    @discardableResult
    public func importPEM(
        _ pem: SecureBytes, passphrase: SecureBytes?, kdf: KeyDerivation = .default,
        allowUnencrypted: Bool = false, created: Date = Date()
    ) throws -> String {
        let key = try P256.Signing.PrivateKey(privateKeyPEM: pem, passphrase: passphrase)
        return try save(
            key, metadata: KeyMetadata(publicKey: key.publicKey, created: created),
            passphrase: passphrase, kdf: kdf, allowUnencrypted: allowUnencrypted)
    }

    /// The same from a `String`: for an encrypted PEM, or text the caller cannot hold otherwise. An
    /// unencrypted key's text stays in the string's memory until it is reused; read key files into
    /// `SecureBytes` instead.
    @discardableResult
    public func importPEM(
        _ pem: String, passphrase: SecureBytes?, kdf: KeyDerivation = .default,
        allowUnencrypted: Bool = false, created: Date = Date()
    ) throws -> String {
        let key = try P256.Signing.PrivateKey(privateKeyPEM: SecureBytes(pem.utf8), passphrase: passphrase)
        return try save(
            key, metadata: KeyMetadata(publicKey: key.publicKey, created: created),
            passphrase: passphrase, kdf: kdf, allowUnencrypted: allowUnencrypted)
    }

    // MARK: Reading

    /// The metadata of every key, oldest first (then by key id). Throws if a record is corrupt
    /// or unsafe rather than hide it: for a caller that decides on the store as a whole (which
    /// trust a backend has, which key is a registration's sibling). ``listing()`` reads each
    /// record on its own.
    public func list() throws -> [KeyMetadata] {
        let listing = try listing()
        if let first = listing.unreadable.first { throw first.error }
        return listing.records
    }

    /// The metadata of `keyId`; `.keyNotFound` if there is no such key.
    public func metadata(_ keyId: String) throws -> KeyMetadata {
        try Self.checkKeyId(keyId)
        return try readMetadata(keyId)
    }

    /// The private key `keyId`. Throws `.keyNotFound`; `.insecureKeyFile` for a file that is not
    /// private to the user; `.passphraseRequired` for an encrypted key and no passphrase;
    /// `.wrongPassphrase`; `.corruptKeyFile` for a truncated, garbled or mismatched file;
    /// `.unsupportedCurve` / `.unsupportedKeyType` for a file holding another kind of key. A
    /// TPM-bound key is loaded into the TPM of `tpm` (no passphrase): `.tpmUnavailable`,
    /// `.tpmKeyForeign` or `.tpmRefused` when that TPM cannot be used, did not make it, or refuses.
    public func load(
        _ keyId: String, passphrase: SecureBytes?,
        tpm: TPMConfiguration = .environment
    ) throws -> P256.Signing.PrivateKey {
        try Self.checkKeyId(keyId)
        // A key file whose record is missing or damaged still opens (it may be the only copy);
        // with a record, the file must be what the record says. A record open to others (or a
        // link, a FIFO) is refused as the key file would be: what it says cannot be trusted, and
        // without it the checks it drives (encrypted or not, TPM or not) would be skipped.
        let record: KeyMetadata?
        do {
            record = try readMetadata(keyId)
        } catch let error as DeviceSigningError where error.code == .insecureKeyFile {
            throw error
        } catch {
            record = nil
        }
        let key: P256.Signing.PrivateKey
        do {
            key = try readPrivateKey(
                Self.privateKeyFile(keyId), passphrase: passphrase, tpm: tpm, record: record)
        } catch let error as DeviceSigningError where error.code == .keyNotFound && record == nil {
            throw noSuchKey(keyId)
        }
        guard key.publicKey.jwkThumbprint == keyId else {
            throw DeviceSigningError(
                .corruptKeyFile,
                "\(storage.filePath(Self.privateKeyFile(keyId))) holds key "
                    + "\(key.publicKey.jwkThumbprint), not \(keyId); the file was renamed or "
                    + "replaced.")
        }
        return key
    }

    /// The private key in the store's file `name`, with the errors of `load` naming the file.
    ///
    /// `record` is the entry's (nil: none); the file must agree with it, TPM-bound or not and
    /// encrypted or not (`.corruptKeyFile` otherwise). The record is what `list`, `show` and
    /// export go by: a record edited to say TPM on top of a software key must not be used as a
    /// hardware-bound key, and an unencrypted file under a record that says encrypted would leave
    /// the passphrase unasked, and every key made from then on (a rotation's, an encryption key)
    /// unencrypted.
    func readPrivateKey(
        _ name: String, passphrase: SecureBytes?,
        tpm: TPMConfiguration, record: KeyMetadata?
    ) throws -> P256.Signing.PrivateKey {
        let text = try storage.readFile(name)
        // Compared before anything is loaded: a TPM key file under a software record must not
        // reach a TPM (nor fail as that TPM's error).
        let holdsTPMKey = P256.Signing.PrivateKey.isTSS2PEM(text)
        if let hardwareBound = record?.isHardwareBound, holdsTPMKey != hardwareBound {
            let held = holdsTPMKey ? "a TPM-bound key" : "a software key"
            let said = hardwareBound ? "TPM-bound" : "a software key"
            throw DeviceSigningError(
                .corruptKeyFile,
                "\(storage.filePath(name)) holds \(held), but the key's record says \(said); the record or the file was replaced."
            )
        }
        do {
            return try P256.Signing.PrivateKey(
                storedPEM: text, passphrase: passphrase, tpm: tpm, mustBeEncrypted: record?.needsPassphrase == true)
        } catch let error as DeviceSigningError {
            let damaged = error.code == .malformedEncoding || error.code == .invalidKey
            throw DeviceSigningError(
                damaged ? .corruptKeyFile : error.code,
                "\(storage.filePath(name)): \(error.reason)", openSSLErrors: error.openSSLErrors)
        }
    }

    // MARK: Changing

    /// Changes the updatable members (`dispatchTargetId`, `deviceId`, `server`) of the record of
    /// `keyId` and stores it atomically; returns the stored record. Changes to other members are
    /// ignored. `update` runs under the store's write lock: it must not call the store.
    @discardableResult
    public func updateMetadata(_ keyId: String, _ update: (inout KeyMetadata) throws -> Void) throws -> KeyMetadata {
        try Self.checkKeyId(keyId)
        return try storage.withExclusiveLock {
            let current = try readMetadata(keyId)
            var changed = current
            try update(&changed)
            let record = current.updated(from: changed)
            try record.encoded().withUnsafeBytes { try storage.writeAtomically(Self.metadataFile(keyId), contents: $0) }
            return record
        }
    }

    /// Removes the key `keyId` (its record first, then the private key and its encryption key,
    /// syncing the directory after each). Throws `.keyNotFound` if neither the record nor the
    /// private key exists, and `.keyInUse` while a register or rotate of it holds its claim
    /// (pass `claim` when the caller is that operation).
    public func delete(_ keyId: String, claim: KeyClaim? = nil) throws {
        try Self.checkKeyId(keyId)
        // Under the key's claim: a register or rotate of it under way must not lose its key (nor
        // its claim's file, which a later claim would then make anew beside the held one).
        try withClaim(on: keyId, held: claim) {
            try storage.withExclusiveLock {
                let removedRecord = try storage.remove(Self.metadataFile(keyId))
                if removedRecord { try storage.syncDirectory() }
                let removedKey = try storage.remove(Self.privateKeyFile(keyId))
                if removedKey { try storage.syncDirectory() }
                if try storage.remove(Self.encryptionKeyFile(keyId)) { try storage.syncDirectory() }
                // Removed while held: a claim opened meanwhile finds the file gone and makes anew.
                _ = try? storage.remove(Self.claimFile(keyId))
                guard removedRecord || removedKey else {
                    throw noSuchKey(keyId)
                }
            }
        }
    }

    // MARK: Key ids and file names

    /// Whether `keyId` has the form of a key id: the unpadded base64url of 32 bytes (43
    /// characters). Only such strings ever become file names.
    public static func isValidKeyId(_ keyId: String) -> Bool {
        keyId.utf8.count == 43 && Base64.decode(keyId, alphabet: .url)?.count == 32
    }

    static func checkKeyId(_ keyId: String) throws {
        guard isValidKeyId(keyId) else {
            throw DeviceSigningError(
                .malformedEncoding,
                "\(String(reflecting: String(keyId.prefix(64)))) is not a key id (43 base64url characters: the key's RFC 7638 JWK thumbprint)."
            )
        }
    }

    static func privateKeyFile(_ keyId: String) -> String { keyId + ".pem" }
    static func metadataFile(_ keyId: String) -> String { keyId + ".json" }
    static func encryptionKeyFile(_ keyId: String) -> String { keyId + ".enc.pem" }

    func readMetadata(_ keyId: String) throws -> KeyMetadata {
        let name = Self.metadataFile(keyId)
        let data: Data
        do {
            data = try storage.readFile(name).withUnsafeBytes { Data($0) }
        } catch let error as DeviceSigningError where error.code == .keyNotFound {
            // A key file without its record is an entry that lost its record: the file is named.
            guard try storage.exists(Self.privateKeyFile(keyId)) else { throw noSuchKey(keyId) }
            throw error
        }
        return try KeyMetadata.decode(data, expectedKeyId: keyId, file: storage.filePath(name))
    }

    /// `.keyNotFound` for a key id with no entry: the store, not a file, is what a person looks in.
    func noSuchKey(_ keyId: String) -> DeviceSigningError {
        DeviceSigningError(.keyNotFound, "There is no key \(keyId) in \(directory.path).")
    }
}

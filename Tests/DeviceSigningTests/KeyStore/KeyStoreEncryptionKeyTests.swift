import FetchChannelTestSupport
import Foundation
import Testing

@testable import DeviceSigning

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Each entry's encryption key (`<keyId>.enc.pem`): stored as the signing key is, named by the
/// record, removed with the entry; an entry made before it existed loads as before and gains one.
@Suite(.dedicatedThread) struct KeyStoreEncryptionKeyTests {
    let cheap = KeyStoreFixtures.cheapKDF

    func withStore<R>(_ body: (KeyStore, URL) throws -> R) throws -> R {
        try withTemporaryDirectory { root in
            let directory = root.appendingPathComponent("keys", isDirectory: true)
            return try body(try KeyStore(directory: directory), directory)
        }
    }

    func mode(_ url: URL) -> Int {
        var info = stat()
        #expect(lstat(url.path, &info) == 0)
        return Int(info.st_mode & 0o7777)
    }

    /// The directory's entries but the store's lock file, which every store that was written has.
    func names(in directory: URL) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)).subtracting([
            KeyStoreDirectory.storeLockName
        ])
    }

    @Test func encryptionKeyRoundTripsUnderTheSigningKeysPassphrase() throws {
        try withStore { store, directory in
            let key = try P256.Signing.PrivateKey()
            let encryptionKey = try P256.KeyAgreement.PrivateKey()
            let keyId = try store.save(
                key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: secret("pass"),
                kdf: cheap, encryptionKey: encryptionKey)
            #expect(try names(in: directory) == ["\(keyId).pem", "\(keyId).enc.pem", "\(keyId).json"])
            let file = directory.appendingPathComponent("\(keyId).enc.pem")
            #expect(mode(file) == 0o600)
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(text.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"))

            let record = try store.metadata(keyId)
            #expect(record.encryptionJWK == encryptionKey.publicKey.jwk.withUse("enc"))
            let json = try String(contentsOf: directory.appendingPathComponent("\(keyId).json"), encoding: .utf8)
            #expect(json.contains("\"use\" : \"enc\""), "\(json)")

            let loaded = try #require(try store.loadEncryptionKey(keyId, passphrase: secret("pass")))
            #expect(loaded.publicKey == encryptionKey.publicKey)
            #expect(try loaded.rawRepresentation.constantTimeEquals(encryptionKey.rawRepresentation))
            expectError(.wrongPassphrase) { try store.loadEncryptionKey(keyId, passphrase: secret("wrong")) }
            expectError(.passphraseRequired) { try store.loadEncryptionKey(keyId, passphrase: nil) }

            // The same PKCS#8 as the signing key: openssl-compatible, not the signing key.
            #expect(
                try P256.KeyAgreement.PrivateKey(encryptedPEM: text, passphrase: secret("pass")).publicKey
                    == encryptionKey.publicKey)
            #expect(record.encryptionJWK?.thumbprint != keyId)
        }
    }

    @Test func signingKeyIsRefusedAsItsOwnEncryptionKey() throws {
        try withStore { store, directory in
            let key = try P256.Signing.PrivateKey()
            let same = P256.KeyAgreement.PrivateKey(key)
            expectError(.invalidKey) {
                try store.save(
                    key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: secret("pass"),
                    kdf: cheap, encryptionKey: same)
            }
            #expect(try names(in: directory).isEmpty, "nothing written")
        }
    }

    @Test func deleteRemovesTheEncryptionKeyFileToo() throws {
        try withStore { store, directory in
            let key = try P256.Signing.PrivateKey()
            let keyId = try store.save(
                key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: secret("pass"),
                kdf: cheap, encryptionKey: try P256.KeyAgreement.PrivateKey())
            try store.delete(keyId)
            #expect(try names(in: directory).isEmpty)
        }
    }

    /// Metadata read from one store names that store's encryption key; saving the key elsewhere
    /// with it (and no encryption key) must not claim a key file the new store does not have.
    @Test func savingWithAnotherStoresMetadataClaimsOnlyWhatItWrites() throws {
        try withTemporaryDirectory { root in
            let first = try KeyStore(directory: root.appendingPathComponent("first", isDirectory: true))
            let second = try KeyStore(directory: root.appendingPathComponent("second", isDirectory: true))
            let key = try P256.Signing.PrivateKey()
            let keyId = try first.save(
                key, metadata: KeyMetadata(publicKey: key.publicKey, deviceId: "phone"), passphrase: secret("pass"),
                kdf: cheap, encryptionKey: try P256.KeyAgreement.PrivateKey())
            let copied = try first.metadata(keyId)
            #expect(copied.encryptionJWK != nil)
            try second.save(key, metadata: copied, passphrase: secret("other"), kdf: cheap)
            #expect(try second.metadata(keyId).encryptionJWK == nil)
            #expect(try second.metadata(keyId).deviceId == "phone", "the rest of the metadata is kept")
            #expect(try second.loadEncryptionKey(keyId, passphrase: secret("other")) == nil)
            // And it can gain one of its own.
            let gained = try second.addEncryptionKey(keyId, passphrase: secret("other"), kdf: cheap)
            #expect(gained.encryptionJWK != nil && gained.encryptionJWK != copied.encryptionJWK)
            #expect(try second.loadEncryptionKey(keyId, passphrase: secret("other")) != nil)
        }
    }

    @Test func entryWithoutEncryptionKeyLoadsAsBeforeAndGainsOneOnce() throws {
        try withStore { store, directory in
            let key = try P256.Signing.PrivateKey()
            let keyId = try store.save(
                key, metadata: KeyMetadata(publicKey: key.publicKey, deviceId: "phone"),
                passphrase: secret("pass"), kdf: cheap)
            let before = try Data(contentsOf: directory.appendingPathComponent("\(keyId).json"))
            #expect(!String(decoding: before, as: UTF8.self).contains("encryptionJWK"), "an old-format record")
            #expect(try store.metadata(keyId).encryptionJWK == nil)
            #expect(try store.loadEncryptionKey(keyId, passphrase: secret("pass")) == nil)
            #expect(try store.load(keyId, passphrase: secret("pass")).publicKey == key.publicKey)

            // The wrong passphrase or none: refused before anything is written.
            expectError(.wrongPassphrase) { try store.addEncryptionKey(keyId, passphrase: secret("wrong"), kdf: cheap) }
            expectError(.passphraseRequired) { try store.addEncryptionKey(keyId, passphrase: nil, kdf: cheap) }
            #expect(try Data(contentsOf: directory.appendingPathComponent("\(keyId).json")) == before)
            #expect(try names(in: directory) == ["\(keyId).pem", "\(keyId).json"])

            let record = try store.addEncryptionKey(keyId, passphrase: secret("pass"), kdf: cheap)
            let jwk = try #require(record.encryptionJWK)
            #expect(jwk.use == "enc" && record.deviceId == "phone")
            #expect(mode(directory.appendingPathComponent("\(keyId).enc.pem")) == 0o600)
            let loaded = try #require(try store.loadEncryptionKey(keyId, passphrase: secret("pass")))
            #expect(loaded.publicKey.jwk == jwk.withUse(nil))
            // A second call keeps the key the backend may already hold.
            #expect(try store.addEncryptionKey(keyId, passphrase: secret("pass"), kdf: cheap).encryptionJWK == jwk)
        }
    }

    @Test func unencryptedEntryGainsAnUnencryptedEncryptionKey() throws {
        try withStore { store, directory in
            let key = try P256.Signing.PrivateKey()
            let keyId = try store.save(
                key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: nil,
                allowUnencrypted: true)
            try store.addEncryptionKey(keyId, passphrase: nil)
            let text = try String(contentsOf: directory.appendingPathComponent("\(keyId).enc.pem"), encoding: .utf8)
            #expect(text.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
            #expect(try store.loadEncryptionKey(keyId, passphrase: nil) != nil)
        }
    }

    @Test func replacedEncryptionKeyFileIsCorrupt() throws {
        try withStore { store, directory in
            let key = try P256.Signing.PrivateKey()
            let keyId = try store.save(
                key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: nil,
                allowUnencrypted: true, encryptionKey: try P256.KeyAgreement.PrivateKey())
            let file = directory.appendingPathComponent("\(keyId).enc.pem")
            try FileManager.default.removeItem(at: file)
            let stranger = try P256.KeyAgreement.PrivateKey().pemRepresentation.withUnsafeBytes { Data($0) }
            #expect(
                FileManager.default.createFile(
                    atPath: file.path, contents: stranger,
                    attributes: [.posixPermissions: 0o600]))
            expectError(.corruptKeyFile) { try store.loadEncryptionKey(keyId, passphrase: nil) }
        }
    }

    @Test func rotationCopiesTheEncryptionKeyToTheNewEntry() throws {
        try withStore { store, directory in
            let old = try P256.Signing.PrivateKey()
            let encryptionKey = try P256.KeyAgreement.PrivateKey()
            let oldId = try store.save(
                old, metadata: KeyMetadata(publicKey: old.publicKey), passphrase: secret("pass"),
                kdf: cheap, encryptionKey: encryptionKey)
            let new = try P256.Signing.PrivateKey()
            let newId = try store.save(
                new, metadata: KeyMetadata(publicKey: new.publicKey), passphrase: secret("pass"),
                kdf: cheap)
            let record = try store.copyEncryptionKey(from: oldId, to: newId)
            #expect(record.encryptionJWK == encryptionKey.publicKey.jwk.withUse("enc"))
            expectError(.keyAlreadyExists) { try store.copyEncryptionKey(from: oldId, to: newId) }
            try store.delete(oldId)
            #expect(try names(in: directory) == ["\(newId).pem", "\(newId).enc.pem", "\(newId).json"])
            #expect(mode(directory.appendingPathComponent("\(newId).enc.pem")) == 0o600)
            let loaded = try #require(try store.loadEncryptionKey(newId, passphrase: secret("pass")))
            #expect(loaded.publicKey == encryptionKey.publicKey)
        }
    }

    /// Without a `kdf`, a new encryption key is derived as the entry's signing key file is, so
    /// the two files of an entry stay protected alike (a PBKDF2 entry does not gain a scrypt file).
    @Test(arguments: [KeyDerivation.pbkdf2SHA256(iterations: 100_000), KeyStoreFixtures.cheapKDF])
    func anAddedEncryptionKeyIsDerivedAsTheSigningKey(_ kdf: KeyDerivation) throws {
        try withStore { store, directory in
            let key = try P256.Signing.PrivateKey()
            let keyId = try store.save(
                key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: secret("pass"), kdf: kdf)
            try store.addEncryptionKey(keyId, passphrase: secret("pass"))
            #expect(try store.signingKeyDerivation(keyId) == kdf)
            let text = try String(contentsOf: directory.appendingPathComponent("\(keyId).enc.pem"), encoding: .utf8)
            let document = try PEM.decodeSecret(SecureBytes(Array(text.utf8)))
            let header = try document.der.withUnsafeBytes { try PBES2Parameters(der: $0) }
            switch kdf {
            case let .scrypt(n, r, p): #expect(header.kdf == .scrypt(n: n, r: r, p: p))
            case let .pbkdf2SHA256(iterations): #expect(header.kdf == .pbkdf2(iterations: iterations, prf: "SHA-256"))
            }
            #expect(try store.loadEncryptionKey(keyId, passphrase: secret("pass")) != nil)
        }
    }

    /// A copy goes only to an entry protected as the old one (both encrypted or both not) whose
    /// signing key it is not; a refused copy writes nothing.
    @Test func copyingRefusesAnEntryProtectedAnotherWayOrItsOwnSigningKey() throws {
        try withStore { store, directory in
            func entry(
                _ passphrase: SecureBytes?, encryptionKey: P256.KeyAgreement.PrivateKey? = nil,
                signingKey: P256.Signing.PrivateKey? = nil
            ) throws -> String {
                let key = try signingKey ?? P256.Signing.PrivateKey()
                return try store.save(
                    key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: passphrase, kdf: cheap,
                    allowUnencrypted: passphrase == nil, encryptionKey: encryptionKey)
            }
            let encrypted = try entry(secret("pass"), encryptionKey: try P256.KeyAgreement.PrivateKey())
            let plain = try entry(nil, encryptionKey: try P256.KeyAgreement.PrivateKey())
            let encryptedWithout = try entry(secret("pass"))
            let plainWithout = try entry(nil)
            expectError(.invalidKey) { try store.copyEncryptionKey(from: encrypted, to: plainWithout) }
            expectError(.invalidKey) { try store.copyEncryptionKey(from: plain, to: encryptedWithout) }

            let reused = try P256.Signing.PrivateKey()
            let donor = try entry(secret("pass"), encryptionKey: P256.KeyAgreement.PrivateKey(reused))
            let recipient = try entry(secret("pass"), signingKey: reused)
            expectError(.invalidKey) { try store.copyEncryptionKey(from: donor, to: recipient) }

            for refused in [plainWithout, encryptedWithout, recipient] {
                #expect(try store.metadata(refused).encryptionJWK == nil)
                #expect(
                    !FileManager.default.fileExists(atPath: directory.appendingPathComponent("\(refused).enc.pem").path)
                )
            }
            #expect(try store.list().count == 6, "every record still reads")
        }
    }

    /// Another writer deletes the entry and saves the same key under another passphrase while the
    /// encryption key is prepared. Before, the new key was written encrypted under the old
    /// passphrase, which no longer opened the entry, and the entry could not be repaired.
    @Test func anEntryReplacedWhileItsEncryptionKeyIsPreparedIsCheckedAgain() throws {
        try withStore { store, directory in
            let key = try P256.Signing.PrivateKey()
            let metadata = KeyMetadata(publicKey: key.publicKey, deviceId: "phone")
            let keyId = try store.save(key, metadata: metadata, passphrase: secret("old"), kdf: cheap)
            let other = try KeyStore(directory: directory)
            let replaced = Locked(false)
            store.storage.beforeLock.withLock { hook in
                hook = {
                    guard
                        replaced.withLock({ done in
                            defer { done = true }
                            return !done
                        })
                    else { return }
                    try other.delete(keyId)
                    try other.save(key, metadata: metadata, passphrase: secret("new"), kdf: KeyStoreFixtures.cheapKDF)
                }
            }
            // "old" opened the entry when it was checked; the entry checked again refuses it.
            expectError(.wrongPassphrase) { try store.addEncryptionKey(keyId, passphrase: secret("old"), kdf: cheap) }
            store.storage.beforeLock.withLock { $0 = nil }
            #expect(try store.metadata(keyId).encryptionJWK == nil)
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("\(keyId).enc.pem").path))
            let added = try store.addEncryptionKey(keyId, passphrase: secret("new"), kdf: cheap)
            let loaded = try #require(try store.loadEncryptionKey(keyId, passphrase: secret("new")))
            #expect(loaded.publicKey.jwk.withUse("enc") == added.encryptionJWK)
        }
    }

    /// Interrupted at either rename (the key file's, or the record's), the entry stays as it was.
    @Test(arguments: [".enc.pem", ".json"])
    func addingAnEncryptionKeyInterruptedLeavesTheEntryAsItWas(interruptedFile: String) throws {
        try withStore { store, directory in
            let key = try P256.Signing.PrivateKey()
            let keyId = try store.save(
                key, metadata: KeyMetadata(publicKey: key.publicKey, deviceId: "phone"),
                passphrase: secret("pass"), kdf: cheap)
            let record = try Data(contentsOf: directory.appendingPathComponent("\(keyId).json"))
            store.storage.beforeRename.withLock { hook in
                hook = { name in if name.hasSuffix(interruptedFile) { throw KeyStoreTests.SimulatedCrash() } }
            }
            #expect(throws: KeyStoreTests.SimulatedCrash.self) {
                try store.addEncryptionKey(keyId, passphrase: secret("pass"), kdf: cheap)
            }
            store.storage.beforeRename.withLock { $0 = nil }
            // The record is untouched: the entry loads as before and has no encryption key.
            #expect(try Data(contentsOf: directory.appendingPathComponent("\(keyId).json")) == record)
            #expect(try store.loadEncryptionKey(keyId, passphrase: secret("pass")) == nil)
            #expect(try store.load(keyId, passphrase: secret("pass")).publicKey == key.publicKey)
            // The next attempt replaces the unnamed file and completes.
            let completed = try store.addEncryptionKey(keyId, passphrase: secret("pass"), kdf: cheap)
            let loaded = try #require(try store.loadEncryptionKey(keyId, passphrase: secret("pass")))
            #expect(loaded.publicKey.jwk.withUse("enc") == completed.encryptionJWK)
        }
    }
}

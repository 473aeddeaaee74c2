import FetchChannelTestSupport
import Foundation
import Testing

@testable import DeviceSigning

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Importing keys, unencrypted keys, temporary files, deletion and key ids.
extension KeyStoreTests {
    // MARK: Import

    @Test func importRefusesOtherCurvesAndKeyTypesAndWritesNothing() throws {
        try withStore { store, directory in
            let pass = secret(KeyStoreFixtures.fixturePassphrase)
            expectError(.unsupportedCurve) {
                try store.importPEM(KeyStoreFixtures.p384Encrypted, passphrase: pass, kdf: cheap)
            }
            expectError(.unsupportedCurve) {
                try store.importPEM(KeyStoreFixtures.p384Plain, passphrase: pass, kdf: cheap)
            }
            expectError(.unsupportedKeyType) {
                try store.importPEM(KeyStoreFixtures.rsaEncrypted, passphrase: pass, kdf: cheap)
            }
            expectError(.unsupportedKeyType) {
                try store.importPEM(KeyStoreFixtures.rsaPlain, passphrase: pass, kdf: cheap)
            }
            expectError(.wrongPassphrase) {
                try store.importPEM(KeyStoreFixtures.p384Encrypted, passphrase: secret("nope"), kdf: cheap)
            }
            expectError(.passphraseRequired) {
                try store.importPEM(KeyStoreFixtures.p384Encrypted, passphrase: nil, kdf: cheap)
            }
            expectError(.malformedEncoding) { try store.importPEM("not a key", passphrase: pass, kdf: cheap) }
            let entries = try names(in: directory)
            #expect(entries.isEmpty)
        }
    }

    /// The text of an unencrypted key can stay in memory that is zeroed.
    @Test func importFromSecureBytes() throws {
        try withStore { store, _ in
            let key = try PrivateKey()
            let keyId = try store.importPEM(try key.pemRepresentation, passphrase: secret("pass"), kdf: cheap)
            #expect(keyId == key.publicKey.jwkThumbprint)
            #expect(try store.load(keyId, passphrase: secret("pass")).publicKey == key.publicKey)
            expectError(.malformedEncoding) { try store.importPEM(SecureBytes("junk".utf8), passphrase: nil) }
        }
    }

    @Test func importOfPlainAndEncryptedPKCS8() throws {
        try withStore { store, _ in
            let pass = secret("pass")
            let plainKey = try PrivateKey()
            let plain = String(decoding: try plainKey.pemRepresentation.withUnsafeBytes { Array($0) }, as: UTF8.self)
            expectError(.passphraseRequired) { try store.importPEM(plain, passphrase: nil) }
            #expect(try store.importPEM(plain, passphrase: pass, kdf: cheap) == plainKey.publicKey.jwkThumbprint)

            let encryptedKey = try PrivateKey()
            let encrypted = try encryptedKey.encryptedPEMRepresentation(
                passphrase: pass, kdf: .pbkdf2SHA256(iterations: 100_000))
            let keyId = try store.importPEM(encrypted, passphrase: pass, kdf: cheap)
            #expect(keyId == encryptedKey.publicKey.jwkThumbprint)
            // Re-encrypted with the store's KDF.
            #expect(try store.metadata(keyId).kdf == "scrypt(N=1024, r=8, p=1), AES-256-CBC")
            #expect(try store.load(keyId, passphrase: pass).publicKey == encryptedKey.publicKey)
            #expect(Set(try store.list().map(\.keyId)) == [plainKey.publicKey.jwkThumbprint, keyId])
        }
    }

    // MARK: Unencrypted keys

    @Test func unencryptedOnlyWithTheExplicitFlag() throws {
        try withStore { store, directory in
            let key = try PrivateKey()
            let metadata = KeyMetadata(publicKey: key.publicKey)
            expectError(.passphraseRequired) { try store.save(key, metadata: metadata, passphrase: nil) }
            #expect(try names(in: directory).isEmpty)
            let keyId = try store.save(key, metadata: metadata, passphrase: nil, allowUnencrypted: true)
            let file = directory.appendingPathComponent("\(keyId).pem")
            #expect(try String(contentsOf: file, encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
            #expect(try mode(file) == 0o600)
            #expect(try store.metadata(keyId).kdf == "none (unencrypted)")
            #expect(try !store.metadata(keyId).needsPassphrase, "an unencrypted key opens without a passphrase")
            let other = try PrivateKey()
            let encrypted = try store.save(
                other, metadata: KeyMetadata(publicKey: other.publicKey), passphrase: secret("pass"), kdf: cheap)
            #expect(try store.metadata(encrypted).needsPassphrase)
            #expect(try store.load(keyId, passphrase: nil).publicKey == key.publicKey)
        }
    }

    // MARK: Temporary files, delete, key ids

    static let staleTemporary = ".fetchchannel-tmp-0123456789abcdef0123456789abcdef"

    /// Only names of the package's own forms are removed: its own, and in a key store (a
    /// directory of its own) those of earlier versions, which a crashed save may have left
    /// holding a key. Elsewhere (the redeemed-token file's directory, an application's) another
    /// component's `.tmp-` files were removed too.
    @Test func staleTemporaryFilesAreRemovedOnOpen() throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store)
            try plant("half a key", at: directory.appendingPathComponent(Self.staleTemporary))
            try plant("half a key", at: directory.appendingPathComponent(".tmp-0123456789abcdef"))
            let others = [
                ".tmp-x", ".tmp-0123456789ABCDEF", ".tmp-", ".fetchchannel-tmp-x", Self.staleTemporary + "0",
                "notes.txt",
            ]
            for name in others { try plant("not ours", at: directory.appendingPathComponent(name)) }
            #expect(try names(in: directory).count == 10)
            let reopened = try KeyStore(directory: directory)
            #expect(try names(in: directory) == Set(["\(keyId).pem", "\(keyId).json"] + others))
            #expect(try reopened.list().map(\.keyId) == [keyId])
        }
    }

    /// A writer that holds the lock (stopped in its write, or on a stalled disk) does not hold
    /// up a command that only opens the store: its temporary files are left for a later opening.
    @Test func openingDoesNotWaitForAWriterThatHoldsTheLock() throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store)
            try plant("a write under way", at: directory.appendingPathComponent(Self.staleTemporary))
            let writer = open(
                directory.appendingPathComponent(KeyStoreDirectory.storeLockName).path, O_RDWR | O_CREAT | O_CLOEXEC,
                0o600)
            try #require(writer >= 0)
            defer { close(writer) }
            try #require(flock(writer, LOCK_EX) == 0)
            let opened = DispatchSemaphore(value: 0)
            let listed = Locked<[String]?>(nil)
            Thread {
                listed.withLock { $0 = (try? KeyStore(directory: directory).list())?.map(\.keyId) }
                opened.signal()
            }.start()
            // A deadline for the failure only: a store that waits for the lock never signals.
            let returned = opened.wait(timeout: .now() + 30) == .success
            #expect(returned, "opening the store waited for the writer's lock")
            flock(writer, LOCK_UN)
            if !returned { opened.wait() }
            #expect(listed.withLock { $0 } == [keyId])
            #expect(try names(in: directory).contains(Self.staleTemporary))
            _ = try KeyStore(directory: directory)  // the lock is free now: the file goes
            #expect(!(try names(in: directory).contains(Self.staleTemporary)))
        }
    }

    /// An encrypted entry whose file was swapped for the same key unencrypted: refused, not
    /// opened without the passphrase (`show` would still say encrypted, and every key made from
    /// it, a rotation's or an encryption key, would be stored unencrypted).
    @Test func anUnencryptedFileUnderAnEncryptedRecordIsCorrupt() throws {
        try withStore { store, directory in
            let (key, keyId) = try saveKey(in: store)
            _ = try store.addEncryptionKey(keyId, passphrase: secret("pass"))
            let encryptionKey = try #require(try store.loadEncryptionKey(keyId, passphrase: secret("pass")))
            for (file, pem) in [
                (KeyStore.privateKeyFile(keyId), try key.pemRepresentation),
                (KeyStore.encryptionKeyFile(keyId), try encryptionKey.pemRepresentation),
            ] {
                let original = try Data(contentsOf: directory.appendingPathComponent(file))
                try plant(
                    pem.withUnsafeBytes { String(decoding: $0, as: UTF8.self) },
                    at: directory.appendingPathComponent(file))
                let error = expectError(.corruptKeyFile) {
                    if file.hasSuffix(".enc.pem") {
                        _ = try store.loadEncryptionKey(keyId, passphrase: nil)
                    } else {
                        _ = try store.load(keyId, passphrase: nil)
                    }
                }
                #expect(error?.reason.contains("record says it is") == true, "\(String(describing: error))")
                try original.write(to: directory.appendingPathComponent(file))
            }
            #expect(try store.load(keyId, passphrase: secret("pass")).publicKey == key.publicKey)
        }
    }

    @Test func deleteRemovesBothFiles() throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store)
            let (_, kept) = try saveKey(in: store)
            try store.delete(keyId)
            #expect(try names(in: directory) == ["\(kept).pem", "\(kept).json"])
            expectError(.keyNotFound) { try store.delete(keyId) }
            expectError(.keyNotFound) { try store.load(keyId, passphrase: secret("pass")) }
            let missing = expectError(.keyNotFound) { try store.metadata(keyId) }
            #expect(missing?.reason == "There is no key \(keyId) in \(directory.path).")
            expectError(.keyNotFound) { try store.updateMetadata(keyId) { $0.deviceId = "x" } }
            #expect(try store.list().map(\.keyId) == [kept])
        }
    }

    @Test func aPrivateKeyWithoutItsRecordIsNotListedButOpensAndDeletes() throws {
        try withStore { store, directory in
            let (key, keyId) = try saveKey(in: store)
            // A crash between the two writes.
            try FileManager.default.removeItem(at: directory.appendingPathComponent("\(keyId).json"))
            #expect(try store.list().isEmpty)
            #expect(try store.load(keyId, passphrase: secret("pass")).publicKey == key.publicKey)
            // The entry is there without its record: the missing file is named, not the key denied.
            let noRecord = expectError(.keyNotFound) { try store.metadata(keyId) }
            #expect(noRecord?.reason.contains("\(keyId).json") == true, "\(String(describing: noRecord))")
            try store.delete(keyId)
            #expect(try names(in: directory).isEmpty)
        }
    }

    struct SimulatedCrash: Error {}

    @Test func aSaveInterruptedBeforeTheRecordLeavesNoListedKey() throws {
        try withStore { store, directory in
            let key = try PrivateKey()
            let keyId = key.publicKey.jwkThumbprint
            store.storage.beforeRename.withLock {
                $0 = { name in if name.hasSuffix(".json") { throw SimulatedCrash() } }
            }
            #expect(throws: SimulatedCrash.self) {
                try store.save(
                    key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: secret("pass"), kdf: cheap)
            }
            store.storage.beforeRename.withLock { $0 = nil }
            // The private key is complete on disk, but the key is not present until its record is.
            #expect(try names(in: directory) == ["\(keyId).pem"])
            #expect(try store.list().isEmpty)
            expectError(.keyNotFound) { try store.metadata(keyId) }
            // Saving again completes it (the orphan .pem is replaced).
            try store.save(key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: secret("new"), kdf: cheap)
            #expect(try store.list().map(\.keyId) == [keyId])
            #expect(try store.load(keyId, passphrase: secret("new")).publicKey == key.publicKey)
        }
    }

    @Test func aSaveInterruptedBeforeThePrivateKeyLeavesNothing() throws {
        try withStore { store, directory in
            let key = try PrivateKey()
            store.storage.beforeRename.withLock { $0 = { _ in throw SimulatedCrash() } }
            #expect(throws: SimulatedCrash.self) {
                try store.save(
                    key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: secret("pass"), kdf: cheap)
            }
            let entries = try names(in: directory)
            #expect(entries.isEmpty)
            #expect(try store.list().isEmpty)
        }
    }

    @Test(arguments: [
        "../../../../etc/passwd", "..", "", "a/b", ".tmp-1",
        "../AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  // 43 characters with a path
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/",  // 43 characters, slash
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",  // padding
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  // 44 characters
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB",  // non-zero trailing bits: no 32-byte value encodes so
    ])
    func keyIdsThatAreNotThumbprintsAreRefused(keyId: String) throws {
        #expect(!KeyStore.isValidKeyId(keyId))
        try withStore { store, _ in
            expectError(.malformedEncoding) { try store.load(keyId, passphrase: secret("pass")) }
            expectError(.malformedEncoding) { try store.metadata(keyId) }
            expectError(.malformedEncoding) { try store.delete(keyId) }
            expectError(.malformedEncoding) { try store.updateMetadata(keyId) { _ in } }
        }
    }

    @Test func thumbprintsAreValidKeyIds() throws {
        for _ in 0..<20 { #expect(KeyStore.isValidKeyId(try PrivateKey().publicKey.jwkThumbprint)) }
        #expect(KeyStore.isValidKeyId("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"))
    }
}

extension KeyStoreTests {
    // MARK: The directory's path

    /// A `..` after a symbolic link leads to the link target's parent, as the file system (and
    /// `ls`) resolves it. Foundation's standardizing took it out with the link as text while the
    /// directory did not exist: the store was made in one directory and later looked for in another.
    @Test func aParentSegmentAfterASymbolicLinkIsLeftToTheFileSystem() throws {
        try withTemporaryDirectory { root in
            let target = root.appendingPathComponent("real/sub", isDirectory: true)
            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                atPath: root.appendingPathComponent("link").path, withDestinationPath: target.path)
            let given = URL(fileURLWithPath: root.path + "/link/./../keys", isDirectory: true)

            let store = try KeyStore(directory: given)
            #expect(store.directory.path == root.path + "/link/../keys", "`.` taken out, `..` kept")
            let (_, keyId) = try saveKey(in: store)
            let made = root.appendingPathComponent("real/keys", isDirectory: true)
            #expect(FileManager.default.fileExists(atPath: made.appendingPathComponent("\(keyId).pem").path))
            #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("keys").path))
            #expect(try KeyStore(directory: given, createIfMissing: false).keyIds() == [keyId])
        }
    }
}

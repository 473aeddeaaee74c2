import FetchChannelTestSupport
import Foundation
import Testing

@testable import DeviceSigning

#if canImport(Glibc)
    import Glibc
#endif

/// A key's claim: one register or rotate of a key at a time, refused at once rather than waited
/// for, and never in the way of the store's other operations.
extension KeyStoreTests {
    @Test func aKeyIsClaimedByOneOperationAtATime() throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store)
            let (_, otherKeyId) = try saveKey(in: store)
            let claim = try store.claim(keyId)
            let refusal = expectError(.keyInUse) { _ = try store.claim(keyId) }
            #expect(refusal?.reason.contains("under way") == true, "\(String(describing: refusal))")
            // Another key, and the store's own writes, are not held up.
            let other = try store.claim(otherKeyId)
            try store.updateMetadata(keyId) { $0.deviceId = "device-1" }
            #expect(try store.list().count == 2, "the claim's file is not a key")
            claim.release()
            claim.release()
            let again = try store.claim(keyId)
            again.release()
            other.release()
            // Released when the claim goes, too.
            do { _ = try store.claim(keyId) }
            // A delete waits for no claim: refused while one is held, unless it is the caller's.
            let held = try store.claim(keyId)
            expectError(.keyInUse) { try store.delete(keyId) }
            #expect(try store.metadata(keyId).keyId == keyId, "the refused delete removed the key")
            try store.delete(keyId, claim: held)
            held.release()
            let remaining = try names(in: directory)
            #expect(!remaining.contains(KeyStore.claimFile(keyId)), "delete leaves the claim's file")
        }
    }

    /// The claim's file is only ever a regular file: a link or a directory in its place is
    /// refused, not followed.
    /// A claim is on a key of one store: the same key in another store is not held by it, so
    /// deleting it there with that claim is refused (before, only the key id was compared).
    @Test func aClaimFromAnotherStoreIsNotHeldHere() throws {
        try withStore { store, directory in
            let (key, keyId) = try saveKey(in: store)
            let other = try KeyStore(directory: directory.deletingLastPathComponent().appendingPathComponent("other"))
            _ = try other.save(
                key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: secret("pass"), kdf: cheap)
            let claim = try store.claim(keyId)
            defer { claim.release() }
            expectError(.keyInUse) { try other.delete(keyId, claim: claim) }
            #expect(try other.list().map(\.keyId) == [keyId], "nothing was deleted")
            // In its own store, and through another instance of that store, the claim holds.
            try KeyStore(directory: directory).delete(keyId, claim: claim)
            #expect(try store.list().isEmpty)
        }
    }

    @Test func aClaimRefusesAnythingButARegularFile() throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store)
            let file = directory.appendingPathComponent(KeyStore.claimFile(keyId))
            try FileManager.default.createSymbolicLink(
                at: file, withDestinationURL: directory.appendingPathComponent("elsewhere"))
            expectError(.fileSystem) { _ = try store.claim(keyId) }
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("elsewhere").path))
            try FileManager.default.removeItem(at: file)
            try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
            expectError(.fileSystem) { _ = try store.claim(keyId) }
            // A FIFO opens (O_RDWR does not wait for a peer) and would take the lock.
            try FileManager.default.removeItem(at: file)
            try #require(mkfifo(file.path, 0o600) == 0)
            let fifo = expectError(.insecureKeyFile) { _ = try store.claim(keyId) }
            #expect(fifo?.reason.contains("not a regular file") == true, "\(String(describing: fifo))")
        }
    }

    @Test func aClaimNeedsAKeyIdOfTheRightForm() throws {
        try withStore { store, directory in
            expectError(.malformedEncoding) { _ = try store.claim("../escape") }
            let created = try names(in: directory)
            #expect(created.isEmpty, "\(created)")
        }
    }
}

/// The store's write lock is waited for within a deadline: a writer stopped while holding it
/// (Ctrl-Z) used to hang every other writer for good.
extension KeyStoreTests {
    /// The write lock is a file of the store, not the directory: an NFS client emulates flock with
    /// an fcntl lock, which needs a descriptor open for writing, and a directory's flock failed
    /// there (EBADF), so no command could open a store in an NFS home. Here: a lock held on the
    /// directory itself no longer concerns the store's writers.
    @Test func theWriteLockIsTheStoresLockFileNotItsDirectory() throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store)
            let holder = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            try #require(holder >= 0)
            defer { close(holder) }
            try #require(flock(holder, LOCK_EX | LOCK_NB) == 0)
            store.storage.lockWait.withLock { $0 = .milliseconds(200) }
            try store.updateMetadata(keyId) { $0.deviceId = "device-2" }
            #expect(try store.metadata(keyId).deviceId == "device-2")
            var info = stat()
            let lock = directory.appendingPathComponent(KeyStoreDirectory.storeLockName).path
            #expect(lstat(lock, &info) == 0 && info.st_mode & 0o170777 == 0o100600, "an empty 0600 file")
            #expect(info.st_size == 0)
            flock(holder, LOCK_UN)
        }
    }

    @Test func aWriterGivesUpWhenTheLockIsHeldTooLong() throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store)
            let holder = open(
                directory.appendingPathComponent(KeyStoreDirectory.storeLockName).path, O_RDWR | O_CREAT | O_CLOEXEC,
                0o600)
            try #require(holder >= 0)
            defer { close(holder) }
            try #require(flock(holder, LOCK_EX | LOCK_NB) == 0)
            store.storage.lockWait.withLock { $0 = .milliseconds(200) }
            let refusal = expectError(.fileSystem) { try store.updateMetadata(keyId) { $0.deviceId = "device-2" } }
            #expect(
                refusal?.reason.contains("has been held by another writer") == true, "\(String(describing: refusal))")
            #expect(try store.metadata(keyId).deviceId == nil, "the refused write changed the record")
            flock(holder, LOCK_UN)
            try store.updateMetadata(keyId) { $0.deviceId = "device-2" }
            #expect(try store.metadata(keyId).deviceId == "device-2")
        }
    }
}

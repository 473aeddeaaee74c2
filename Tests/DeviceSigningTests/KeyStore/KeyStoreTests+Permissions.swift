import FetchChannelTestSupport
import Foundation
import Testing

@testable import DeviceSigning

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The key store refuses files and directories that others could read or swap.
extension KeyStoreTests {
    // MARK: Modes and permissions

    @Test func directoryIsCreated0700AndFiles0600() throws {
        try withTemporaryDirectory { root in
            let parent = root.appendingPathComponent("data")
            let directory = parent.appendingPathComponent("fetchchannel/keys")
            let store = try KeyStore(directory: directory)
            #expect(try mode(directory) == 0o700)
            #expect(try mode(parent) == 0o700)
            let (_, keyId) = try saveKey(in: store)
            #expect(try mode(directory.appendingPathComponent("\(keyId).pem")) == 0o600)
            #expect(try mode(directory.appendingPathComponent("\(keyId).json")) == 0o600)
            try store.updateMetadata(keyId) { $0.dispatchTargetId = "t" }
            #expect(try mode(directory.appendingPathComponent("\(keyId).json")) == 0o600)
        }
    }

    @Test(arguments: [0o755, 0o750, 0o701, 0o770])
    func directoryOpenToOthersIsRefusedWithTheFix(permissions: Int) throws {
        try withTemporaryDirectory { root in
            let directory = root.appendingPathComponent("keys")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            #expect(chmod(directory.path, mode_t(permissions)) == 0)
            let error = expectError(.insecureKeyFile) { try KeyStore(directory: directory) }
            #expect(error?.reason.contains("chmod 700 \(directory.path)") == true)
            #expect(chmod(directory.path, 0o700) == 0)
            _ = try KeyStore(directory: directory)
        }
    }

    @Test func missingDirectoryWithoutCreateAndAFileInsteadOfADirectoryAreRefused() throws {
        try withTemporaryDirectory { root in
            expectError(.fileSystem) {
                try KeyStore(directory: root.appendingPathComponent("absent"), createIfMissing: false)
            }
            #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("absent").path))
            let file = root.appendingPathComponent("file")
            try plant("x", at: file)
            expectError(.fileSystem) { try KeyStore(directory: file) }
        }
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660])
    func keyFileOpenToOthersIsRefusedWithTheFix(permissions: Int) throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store)
            for name in ["\(keyId).pem", "\(keyId).json"] {
                let file = directory.appendingPathComponent(name)
                #expect(chmod(file.path, mode_t(permissions)) == 0)
                let error = expectError(.insecureKeyFile) {
                    name.hasSuffix(".pem")
                        ? try store.load(keyId, passphrase: secret("pass")).publicKey.jwkThumbprint
                        : try store.metadata(keyId).keyId
                }
                #expect(error?.reason.contains("chmod 600 \(file.path)") == true)
                if name.hasSuffix(".json") {
                    expectError(.insecureKeyFile) { try store.list() }
                    // Nor does the key open under a record that cannot be trusted.
                    expectError(.insecureKeyFile) { try store.load(keyId, passphrase: secret("pass")) }
                }
                #expect(chmod(file.path, 0o600) == 0)
            }
            #expect(try store.load(keyId, passphrase: secret("pass")).publicKey.jwkThumbprint == keyId)
        }
    }

    /// `listing()` reads each record on its own: one refused record is reported beside the
    /// others, while `list()` still refuses the store as a whole, and `keyIds()` reads no record.
    @Test func listingReportsAnUnsafeRecordBesideTheOthers() throws {
        try withStore { store, directory in
            let (_, kept) = try saveKey(in: store)
            let (_, opened) = try saveKey(in: store)
            let record = directory.appendingPathComponent("\(opened).json")
            #expect(chmod(record.path, 0o644) == 0)
            let listing = try store.listing()
            #expect(listing.records.map(\.keyId) == [kept])
            #expect(listing.unreadable.map(\.keyId) == [opened])
            #expect(listing.unreadable.first?.error.code == .insecureKeyFile)
            #expect(listing.unreadable.first?.error.reason.contains("chmod 600 \(record.path)") == true)
            expectError(.insecureKeyFile) { try store.list() }
            #expect(try store.keyIds() == [kept, opened].sorted())
            try plant("{not json", at: record)
            #expect(try store.listing().unreadable.first?.error.code == .corruptKeyFile)
        }
    }

    @Test func symbolicLinkToAKeyFileIsRefused() throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store)
            let file = directory.appendingPathComponent("\(keyId).pem")
            let elsewhere = directory.deletingLastPathComponent().appendingPathComponent("moved.pem")
            try FileManager.default.moveItem(at: file, to: elsewhere)
            try FileManager.default.createSymbolicLink(at: file, withDestinationURL: elsewhere)
            let error = expectError(.insecureKeyFile) { try store.load(keyId, passphrase: secret("pass")) }
            #expect(error?.reason.contains("symbolic link") == true)
            #expect(error?.reason.contains(file.path) == true)
        }
    }

    @Test func directoryOrFIFOWhereAFileShouldBeIsRefused() throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store)
            let file = directory.appendingPathComponent("\(keyId).pem")
            try FileManager.default.removeItem(at: file)
            #expect(mkdir(file.path, 0o700) == 0)
            let error = expectError(.insecureKeyFile) { try store.load(keyId, passphrase: secret("pass")) }
            #expect(error?.reason.contains("is a directory") == true)
            #expect(rmdir(file.path) == 0)
            #expect(mkfifo(file.path, 0o600) == 0)
            expectError(.insecureKeyFile) { try store.load(keyId, passphrase: secret("pass")) }  // and does not hang
        }
    }

    @Test func filesAndDirectoriesOfAnotherUserAreRefused() throws {
        guard geteuid() == 0 else {
            print(
                "note: filesAndDirectoriesOfAnotherUserAreRefused needs root to chown; ownership refusal not exercised")
            return
        }
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store)
            let file = directory.appendingPathComponent("\(keyId).pem")
            #expect(chown(file.path, 65534, 65534) == 0)
            let error = expectError(.insecureKeyFile) { try store.load(keyId, passphrase: secret("pass")) }
            #expect(error?.reason.contains("owned by uid 65534") == true)
            #expect(chown(directory.path, 65534, 65534) == 0)
            expectError(.insecureKeyFile) { try KeyStore(directory: directory) }
        }
    }
}

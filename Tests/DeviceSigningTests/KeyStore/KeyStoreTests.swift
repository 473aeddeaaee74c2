import FetchChannelTestSupport
import Foundation
import Testing

@testable import DeviceSigning

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite(.dedicatedThread) struct KeyStoreTests {
    typealias PrivateKey = P256.Signing.PrivateKey
    let cheap = KeyStoreFixtures.cheapKDF

    // MARK: Helpers

    /// A store in a not-yet-existing `keys` directory under a fresh temporary directory.
    func withStore<R>(_ body: (KeyStore, URL) throws -> R) throws -> R {
        try withTemporaryDirectory { root in
            let directory = root.appendingPathComponent("keys", isDirectory: true)
            return try body(try KeyStore(directory: directory), directory)
        }
    }

    /// Saves a fresh key with the cheap KDF and passphrase "pass".
    func saveKey(in store: KeyStore, created: Date = Date(), deviceId: String? = nil) throws -> (PrivateKey, String) {
        let key = try PrivateKey()
        let keyId = try store.save(
            key, metadata: KeyMetadata(publicKey: key.publicKey, deviceId: deviceId, created: created),
            passphrase: secret("pass"), kdf: cheap)
        return (key, keyId)
    }

    func mode(_ url: URL) throws -> Int {
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

    /// Writes `contents` to a new file with mode 0600 (as the store would), replacing any old one.
    func plant(_ contents: String, at url: URL) throws {
        try? FileManager.default.removeItem(at: url)
        #expect(
            FileManager.default.createFile(
                atPath: url.path, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600]))
    }

    // MARK: Round trips

    @Test(arguments: [KeyStoreFixtures.cheapKDF, .pbkdf2SHA256(iterations: 100_000)])
    func saveThenLoadReturnsTheKey(kdf: KeyDerivation) throws {
        try withStore { store, directory in
            let key = try PrivateKey()
            let keyId = try store.save(
                key,
                metadata: KeyMetadata(publicKey: key.publicKey, deviceId: "device-1", server: "https://idp.example"),
                passphrase: secret("pass"), kdf: kdf)
            #expect(keyId == key.publicKey.jwkThumbprint)
            #expect(try names(in: directory) == ["\(keyId).pem", "\(keyId).json"])
            let loaded = try store.load(keyId, passphrase: secret("pass"))
            #expect(loaded.publicKey == key.publicKey)
            #expect(try loaded.rawRepresentation.constantTimeEquals(key.rawRepresentation))
            let pem = try String(contentsOf: directory.appendingPathComponent("\(keyId).pem"), encoding: .utf8)
            #expect(pem.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"))
            let metadata = try store.metadata(keyId)
            #expect(metadata.keyId == keyId)
            #expect(metadata.deviceId == "device-1")
            #expect(metadata.server == "https://idp.example")
            #expect(metadata.kdf == "\(kdf), AES-256-CBC")
            #expect(try metadata.publicKey() == key.publicKey)
        }
    }

    @Test func defaultCostSavesAndLoads() throws {
        try withStore { store, _ in
            let key = try PrivateKey()
            let keyId = try store.save(key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: secret("pass"))
            #expect(try store.metadata(keyId).kdf == "scrypt(N=16384, r=8, p=1), AES-256-CBC")
            #expect(try store.load(keyId, passphrase: secret("pass")).publicKey == key.publicKey)
        }
    }

    /// A record edited to say TPM over a software key file: before, the key loaded and signed
    /// in software while `list` and `show` said "TPM 2.0 (not exportable)".
    @Test func aRecordThatClaimsATPMForASoftwareKeyIsRefused() throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store, created: Date(), deviceId: "device-1")
            let record = directory.appendingPathComponent("\(keyId).json")
            var object = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: record)) as? [String: Any])
            object["protection"] = "tpm2"
            let edited = try JSONSerialization.data(withJSONObject: object)
            try edited.write(to: record)
            #expect(try store.metadata(keyId).isHardwareBound, "the record says TPM")
            let error = expectError(.corruptKeyFile) { try store.load(keyId, passphrase: secret("pass")) }
            #expect(error?.reason.contains("record says TPM-bound") == true, "\(String(describing: error))")
        }
    }

    /// A TPM key file under a record that says software is refused before any TPM is asked: it
    /// used to be loaded first, and failed as that TPM's error (here: nothing listens on port 1).
    @Test func aTPMKeyFileUnderASoftwareRecordIsRefusedBeforeAnyTPMIsAsked() throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store)
            let tss2 = PEM.encode(label: P256.Signing.PrivateKey.tss2PEMLabel, der: TSS2KeyProvenanceTests.generated)
            try plant(tss2, at: directory.appendingPathComponent(KeyStore.privateKeyFile(keyId)))
            let unreachable = TPMConfiguration(tcti: "swtpm:host=127.0.0.1,port=1", timeout: .seconds(5))
            let error = expectError(.corruptKeyFile) {
                _ = try store.load(keyId, passphrase: secret("pass"), tpm: unreachable)
            }
            #expect(error?.reason.contains("record says a software key") == true, "\(String(describing: error))")
        }
    }

    @Test func metadataFileIsTheDocumentedJSON() throws {
        try withStore { store, directory in
            let created = Date(timeIntervalSince1970: 1_700_000_000.75)
            let (key, keyId) = try saveKey(in: store, created: created, deviceId: "device-1")
            let data = try Data(contentsOf: directory.appendingPathComponent("\(keyId).json"))
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(object["keyId"] as? String == keyId)
            #expect(object["deviceId"] as? String == "device-1")
            #expect(object["created"] as? String == "2023-11-14T22:13:20Z")
            #expect(object["kdf"] as? String == "scrypt(N=1024, r=8, p=1), AES-256-CBC")
            #expect(object["dispatchTargetId"] == nil)
            let jwk = try #require(object["jwk"] as? [String: String])
            #expect(jwk == ["kty": "EC", "crv": "P-256", "x": key.publicKey.jwk.x, "y": key.publicKey.jwk.y])
            #expect(try store.metadata(keyId).created == Date(timeIntervalSince1970: 1_700_000_000))
        }
    }

    @Test func updateMetadataStoresTheDispatchTargetAndKeepsTheIdentity() throws {
        try withTemporaryDirectory { root in
            let directory = root.appendingPathComponent("keys")
            let (other, _) = try (PrivateKey(), ())
            let keyId: String
            do {
                let store = try KeyStore(directory: directory)
                (_, keyId) = try saveKey(in: store, deviceId: "device-1")
                let updated = try store.updateMetadata(keyId) { record in
                    record.dispatchTargetId = "target-42"
                }
                #expect(updated.dispatchTargetId == "target-42")
                #expect(updated.deviceId == "device-1")
                // Replacing the whole value only takes the updatable members.
                try store.updateMetadata(keyId) { record in
                    var foreign = KeyMetadata(publicKey: other.publicKey, server: "https://other.example")
                    foreign.dispatchTargetId = record.dispatchTargetId
                    record = foreign
                }
            }
            let reopened = try KeyStore(directory: directory)
            let metadata = try reopened.metadata(keyId)
            #expect(metadata.keyId == keyId)
            #expect(metadata.dispatchTargetId == "target-42")
            #expect(metadata.server == "https://other.example")
            #expect(metadata.deviceId == nil)
            #expect(metadata.kdf == "scrypt(N=1024, r=8, p=1), AES-256-CBC")
            #expect(try reopened.list().map(\.keyId) == [keyId])
        }
    }

    @Test func concurrentUpdatesAreNotLost() throws {
        try withStore { store, _ in
            let (_, keyId) = try saveKey(in: store)
            let fields = 8
            DispatchQueue.concurrentPerform(iterations: fields) { index in
                _ = try? store.updateMetadata(keyId) { record in
                    record.server = (record.server ?? "") + "[\(index)]"
                }
            }
            let server = try #require(try store.metadata(keyId).server)
            for index in 0..<fields { #expect(server.contains("[\(index)]")) }
        }
    }

    @Test func listIsSortedByCreationThenKeyId() throws {
        try withStore { store, _ in
            let (_, late) = try saveKey(in: store, created: Date(timeIntervalSince1970: 3_000))
            let (_, early) = try saveKey(in: store, created: Date(timeIntervalSince1970: 1_000))
            let (_, middle) = try saveKey(in: store, created: Date(timeIntervalSince1970: 2_000))
            #expect(try store.list().map(\.keyId) == [early, middle, late])
        }
    }

    @Test func savingTheSameKeyTwiceIsRefused() throws {
        try withStore { store, _ in
            let key = try PrivateKey()
            try store.save(key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: secret("pass"), kdf: cheap)
            expectError(.keyAlreadyExists) {
                try store.save(
                    key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: secret("other"), kdf: cheap)
            }
            #expect(try store.load(key.publicKey.jwkThumbprint, passphrase: secret("pass")).publicKey == key.publicKey)
        }
    }

    @Test func metadataOfAnotherKeyIsRefused() throws {
        try withStore { store, directory in
            let key = try PrivateKey()
            expectError(.invalidKey) {
                try store.save(
                    key, metadata: KeyMetadata(publicKey: try PrivateKey().publicKey), passphrase: secret("pass"),
                    kdf: cheap)
            }
            #expect(try names(in: directory).isEmpty)
        }
    }

    // MARK: Failures of the key file

    @Test func wrongOrMissingPassphrase() throws {
        try withStore { store, _ in
            let (_, keyId) = try saveKey(in: store)
            expectError(.wrongPassphrase) { try store.load(keyId, passphrase: secret("Pass")) }
            expectError(.passphraseRequired) { try store.load(keyId, passphrase: nil) }
            expectError(.passphraseRequired) { try store.load(keyId, passphrase: secret("")) }
        }
    }

    @Test func truncatedOrGarbageKeyFileIsCorrupt() throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store)
            let file = directory.appendingPathComponent("\(keyId).pem")
            let original = try String(contentsOf: file, encoding: .utf8)
            let lines = original.split(separator: "\n")
            // Seeded: a run that fails fails again, with the same bytes.
            var random = SplitMix64(seed: 0x5EED_0002)
            let garbage = (0..<300).map { _ in UInt8.random(in: 0...255, using: &random) }
            let damaged = [
                String(original.prefix(original.count / 2)),  // cut mid-file
                (lines.prefix(2) + lines.suffix(1)).joined(separator: "\n") + "\n",  // body lines lost
                String(decoding: garbage, as: UTF8.self),  // garbage
                "",  // empty
            ]
            for text in damaged {
                try plant(text, at: file)
                expectError(.corruptKeyFile) { try store.load(keyId, passphrase: secret("pass")) }
            }
            try plant(String(repeating: "A", count: 70_000), at: file)
            let error = expectError(.corruptKeyFile) { try store.load(keyId, passphrase: secret("pass")) }
            #expect(error?.reason.contains("65536") == true)
        }
    }

    @Test func garbageMetadataIsCorrupt() throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store)
            let (_, otherId) = try saveKey(in: store)
            let file = directory.appendingPathComponent("\(keyId).json")
            try plant("{not json", at: file)
            expectError(.corruptKeyFile) { try store.metadata(keyId) }
            expectError(.corruptKeyFile) { try store.list() }
            // A record renamed to another key's name.
            try plant(
                try String(contentsOf: directory.appendingPathComponent("\(otherId).json"), encoding: .utf8), at: file)
            expectError(.corruptKeyFile) { try store.metadata(keyId) }
        }
    }

    /// JSONDecoder keeps the first of two duplicate members, JSONSerialization the last: a record
    /// with a duplicate (top level or inside the JWK, escaped or not) is refused, not read one way.
    @Test func metadataWithADuplicateMemberIsCorrupt() throws {
        try withStore { store, directory in
            let (_, keyId) = try saveKey(in: store, deviceId: "phone-1")
            let file = directory.appendingPathComponent("\(keyId).json")
            let stored = try String(contentsOf: file, encoding: .utf8)
            let edits = [
                stored.replacingOccurrences(of: "{\n", with: "{\n  \"deviceId\" : \"phone-2\",\n", options: .anchored),
                stored.replacingOccurrences(of: #""deviceId""#, with: #""devic\u0065Id" : "phone-2",\#n  "deviceId""#),
                stored.replacingOccurrences(of: "\"crv\"", with: "\"kty\" : \"EC\",\n    \"crv\""),
            ]
            for edited in edits {
                #expect(edited != stored)
                try plant(edited, at: file)
                let error = expectError(.corruptKeyFile) { try store.metadata(keyId) }
                #expect(error?.reason.contains("more than once") == true, "\(String(describing: error))")
                expectError(.corruptKeyFile) { try store.list() }
            }
            try plant(stored, at: file)
            #expect(try store.metadata(keyId).deviceId == "phone-1")
        }
    }

    @Test func keyFileOfAnotherKeyIsCorrupt() throws {
        try withStore { store, directory in
            let (_, first) = try saveKey(in: store)
            let (_, second) = try saveKey(in: store)
            let secondPEM = try String(contentsOf: directory.appendingPathComponent("\(second).pem"), encoding: .utf8)
            try plant(secondPEM, at: directory.appendingPathComponent("\(first).pem"))
            let error = expectError(.corruptKeyFile) { try store.load(first, passphrase: secret("pass")) }
            #expect(error?.reason.contains(second) == true)
        }
    }

    @Test func otherCurvesAndKeyTypesInTheStoreKeepTheirCodes() throws {
        try withStore { store, directory in
            let keyId = try PrivateKey().publicKey.jwkThumbprint
            let file = directory.appendingPathComponent("\(keyId).pem")
            let pass = secret(KeyStoreFixtures.fixturePassphrase)
            try plant(KeyStoreFixtures.p384Encrypted, at: file)
            expectError(.unsupportedCurve) { try store.load(keyId, passphrase: pass) }
            try plant(KeyStoreFixtures.rsaEncrypted, at: file)
            expectError(.unsupportedKeyType) { try store.load(keyId, passphrase: pass) }
            try plant(KeyStoreFixtures.p384Plain, at: file)
            expectError(.unsupportedCurve) { try store.load(keyId, passphrase: nil) }
        }
    }

    // MARK: Secrets

    @Test func noPassphraseOrKeyBytesInErrorsOrDescriptions() throws {
        try withStore { store, directory in
            let passphrase = "correct-horse-battery-staple"
            let key = try PrivateKey()
            let keyId = try store.save(
                key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: secret(passphrase), kdf: cheap)
            let scalar = try key.rawRepresentation.withUnsafeBytes { Array($0) }
            let forbidden = [
                passphrase, "battery", Data(scalar).base64EncodedString(), Base64.encode(scalar, alphabet: .url),
                scalar.map { String(format: "%02x", $0) }.joined(),
            ]
            var texts = [store.description, String(describing: try store.metadata(keyId)), String(describing: key)]
            let attempts: [() throws -> Void] = [
                { _ = try store.load(keyId, passphrase: secret(passphrase + "!")) },
                { _ = try store.load(keyId, passphrase: nil) },
                {
                    _ = try store.save(
                        key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: secret(passphrase), kdf: cheap
                    )
                },
                {
                    _ = try store.importPEM(
                        String(decoding: try key.pemRepresentation.withUnsafeBytes { Array($0) }, as: UTF8.self),
                        passphrase: nil)
                },
                {
                    _ = try PrivateKey(
                        encryptedPEM:
                            "-----BEGIN ENCRYPTED PRIVATE KEY-----\n\(passphrase)\n-----END ENCRYPTED PRIVATE KEY-----\n",
                        passphrase: secret(passphrase))
                },
            ]
            for attempt in attempts {
                do {
                    try attempt()
                    Issue.record("expected a failure")
                } catch { texts += [String(describing: error), String(reflecting: error)] }
            }
            let json = try String(contentsOf: directory.appendingPathComponent("\(keyId).json"), encoding: .utf8)
            texts.append(json)
            for text in texts {
                for secretText in forbidden { #expect(!text.contains(secretText), "leaked in: \(text)") }
            }
        }
    }

    // MARK: Default directory

    @Test func defaultDirectoryFollowsXDG() {
        #expect(
            KeyStore.defaultDirectory(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"]).path
                == "/data/fetchchannel/keys")
        #expect(
            KeyStore.defaultDirectory(environment: ["XDG_DATA_HOME": "relative", "HOME": "/home/u"]).path
                == "/home/u/.local/share/fetchchannel/keys")
        #expect(
            KeyStore.defaultDirectory(environment: ["HOME": "/home/u"]).path == "/home/u/.local/share/fetchchannel/keys"
        )
    }
}

import DeviceSigning
import FetchChannelEmulator
import Foundation
import Testing

extension CLISubprocessTests {
    /// A key's encryption key on the command line: shown, exported under the signing key's rules,
    /// registered beside the signature key, kept by rotation, and used by fetch to decrypt the
    /// backend's `application/jose` answer.
    @Suite struct EncryptionKeyProcessTests {
        var passphrase: SecureBytes { SecureBytes(Array(CLISandbox.passphrase.utf8)) }

        static func storeFile(_ sandbox: CLISandbox, _ name: String) -> URL {
            URL(fileURLWithPath: sandbox.store).appendingPathComponent(name)
        }

        /// Turns `keyId` into an entry made before encryption keys existed: no `.enc.pem`, a
        /// record without `encryptionJWK`.
        static func makeOldFormat(_ sandbox: CLISandbox, _ keyId: String) throws {
            let recordURL = Self.storeFile(sandbox, keyId + ".json")
            let parsed = try JSONSerialization.jsonObject(with: Data(contentsOf: recordURL))
            var record = try #require(parsed as? [String: Any])
            record["encryptionJWK"] = nil
            let data = try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])
            try FileManager.default.removeItem(at: recordURL)
            try FileManager.default.removeItem(at: Self.storeFile(sandbox, keyId + ".enc.pem"))
            #expect(
                FileManager.default.createFile(
                    atPath: recordURL.path, contents: data,
                    attributes: [.posixPermissions: 0o600]))
        }

        /// Registers `keyId` as a key made before encryption keys existed was: a dispatch target
        /// without an encryption key, recorded in the key's entry.
        static func registerWithoutEncryptionKey(
            _ sandbox: CLISandbox, _ backend: ReferenceBackend, _ keyId: String, deviceId: String
        ) throws {
            let store = try KeyStore(directory: URL(fileURLWithPath: sandbox.store), createIfMissing: false)
            let targetId = try backend.registerDispatchTarget(
                deviceId: deviceId, signatureKey: try store.metadata(keyId).jwk.publicKey())
            try store.updateMetadata(keyId) {
                $0.deviceId = deviceId
                $0.dispatchTargetId = targetId
                $0.server = backend.baseURL.absoluteString
            }
        }

        func show(_ sandbox: CLISandbox, _ keyId: String) async throws -> [String: Any] {
            let shown = try await sandbox.run(
                ["key", "show", "--json"] + sandbox.storeArguments + ["--", keyId],
                passphrase: nil)
            return try #require(try shown.json() as? [String: Any], "\(shown.summary)")
        }

        func register(_ sandbox: CLISandbox, _ backend: ReferenceBackend, _ keyId: String) async throws {
            let result = try await sandbox.run(
                [
                    "register", "--server", backend.baseURL.absoluteString,
                    "--device-id", "phone", "--key", keyId,
                ] + sandbox.storeArguments)
            try #require(result.status == 0, "\(result.summary)")
        }

        /// `fetch --json`: the tokens it printed and its errors.
        func fetch(_ sandbox: CLISandbox) async throws -> (tokens: [String], errors: [[String: Any]], status: Int32) {
            let result = try await sandbox.run(["fetch", "--json"] + sandbox.storeArguments)
            let object = try #require(try result.json() as? [String: Any], "\(result.summary)")
            let operations = try #require(object["operations"] as? [[String: Any]])
            let tokens = operations.compactMap {
                (($0["payload"] as? [String: Any])?["redeemData"] as? [String: Any])?["token"] as? String
            }
            return (tokens, try #require(object["errors"] as? [[String: Any]]), result.status)
        }

        @Test func showAndExportTheEncryptionKey() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let store = sandbox.storeArguments
            let keyId = try await sandbox.generateKey()
            #expect(try TestPaths.mode(Self.storeFile(sandbox, keyId + ".enc.pem")) == 0o600)

            // show --json: both public JWKs, the encryption key's with "use":"enc".
            let shown = try await show(sandbox, keyId)
            let signing = try #require(shown["publicJwk"] as? [String: String])
            let encryption = try #require(shown["encryptionKey"] as? [String: String], "\(shown)")
            #expect(Set(signing.keys) == ["kty", "crv", "x", "y"])
            #expect(Set(encryption.keys) == ["kty", "crv", "x", "y", "use"] && encryption["use"] == "enc")
            #expect(encryption["x"] != signing["x"], "the encryption key is never the signing key")
            let listed = try await sandbox.run(["key", "list", "--json"] + store, passphrase: nil)
            let listedKeys = try #require(try listed.json() as? [[String: Any]], "\(listed.summary)")
            #expect(listedKeys.first?["encryptionKey"] as? [String: String] == encryption, "list = show, element-wise")
            let text = try await sandbox.run(["key", "show"] + store + ["--", keyId], passphrase: nil)
            #expect(text.out.contains(#"Encryption JWK:   {"crv":"P-256","kty":"EC","use":"enc""#), "\(text.summary)")
            let encryptionJWK = try JWK(jsonRepresentation: JSONSerialization.data(withJSONObject: encryption))
            let publicKey = try P256.KeyAgreement.PublicKey(jwk: encryptionJWK)

            // Public exports: PEM, JWK (with use), DER, no passphrase needed.
            let pem = try await sandbox.run(
                ["key", "export", "--encryption"] + store + ["--", keyId], passphrase: nil)
            #expect(try P256.KeyAgreement.PublicKey(pemRepresentation: pem.out) == publicKey, "\(pem.summary)")
            let jwk = try await sandbox.run(
                ["key", "export", "--encryption", "--format", "jwk"] + store + ["--", keyId])
            #expect(try JWK(jsonRepresentation: jwk.standardOutput) == encryptionJWK, "\(jwk.summary)")
            let der = try await sandbox.run(
                ["key", "export", "--encryption", "--format", "der"] + store + ["--", keyId])
            #expect(der.standardOutput == publicKey.derRepresentation)

            // Private: encrypted PKCS#8 under the key's passphrase; unencrypted only when asked.
            let privatePEM = try await sandbox.run(
                ["key", "export", "--encryption", "--private"] + store + ["--", keyId])
            #expect(privatePEM.out.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"), "\(privatePEM.summary)")
            #expect(
                try P256.KeyAgreement.PrivateKey(encryptedPEM: privatePEM.out, passphrase: passphrase).publicKey
                    == publicKey)
            let secret = try await sandbox.run(
                [
                    "key", "export", "--encryption", "--private", "--no-encryption",
                    "--format", "jwk", keyId,
                ] + store)
            #expect(
                secret.status == 0 && secret.err.contains("warning: this is the private encryption key"),
                "\(secret.summary)")
            #expect(try P256.KeyAgreement.PrivateKey(jwkRepresentation: secret.standardOutput).publicKey == publicKey)
            let d = try #require((try secret.json() as? [String: String])?["d"])
            for result in [pem, jwk, privatePEM, text] { #expect(!result.out.contains(d) && !result.err.contains(d)) }

            // The same refusals as for the signing key.
            let privateJWK = try await sandbox.run(
                [
                    "key", "export", "--encryption", "--private", "--format", "jwk",
                    keyId,
                ] + store)
            #expect(privateJWK.status == 64 && privateJWK.out.isEmpty, "\(privateJWK.summary)")
            let publicNoEncryption = try await sandbox.run(
                [
                    "key", "export", "--encryption", "--no-encryption",
                    keyId,
                ] + store)
            #expect(publicNoEncryption.status == 64, "\(publicNoEncryption.summary)")
            let wrong = try await sandbox.run(
                ["key", "export", "--encryption", "--private"] + store + ["--", keyId],
                passphrase: "wrong")
            #expect(
                wrong.status == 1 && wrong.out.isEmpty && wrong.err.contains("does not open key"),
                "\(wrong.summary)")
            let none = try await sandbox.run(
                ["key", "export", "--encryption", "--private"] + store + ["--", keyId],
                passphrase: nil)
            #expect(none.status == 64 && none.out.isEmpty && none.err.contains("not a terminal"), "\(none.summary)")

            // A key made before encryption keys existed: null, and nothing to export yet.
            try Self.makeOldFormat(sandbox, keyId)
            #expect(try await show(sandbox, keyId)["encryptionKey"] is NSNull)
            let missing = try await sandbox.run(["key", "export", "--encryption"] + store + ["--", keyId])
            #expect(missing.status == 1 && missing.err.contains("no encryption key yet"), "\(missing.summary)")

            // delete removes the encryption key file too.
            let other = try await sandbox.generateKey()
            let deleted = try await sandbox.run(["key", "delete"] + store + ["--", other])
            #expect(deleted.status == 0, "\(deleted.summary)")
            #expect(!FileManager.default.fileExists(atPath: Self.storeFile(sandbox, other + ".enc.pem").path))
        }

        @Test func registerThenFetchDecryptsAndRotationKeepsTheEncryptionKey() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            let encryptionKey = try #require(try await show(sandbox, keyId)["encryptionKey"] as? [String: String])
            try await register(sandbox, backend, keyId)

            // The answer is a JWE: a client with an encryption key refuses anything but
            // application/jose, and the emulator sends that only to Accept: application/jose.
            let first = try backend.dispatch(deviceId: "phone", channel: "link")
            let fetched = try await fetch(sandbox)
            #expect(fetched.status == 0 && fetched.tokens == [first.token], "\(fetched.errors)")
            // A JWE to another key is refused as undecryptable: the CLI decrypts with its own key.
            try backend.injectFault(EmulatorFault(endpoint: .operations, kind: .undecryptable, count: 1))
            let refused = try await fetch(sandbox)
            #expect(refused.status == 1 && refused.tokens.isEmpty)
            let message = try #require(refused.errors.first?["message"] as? String)
            #expect(refused.errors.first?["code"] as? String == "invalidResponse")
            #expect(refused.errors.first?["invalidResponseKind"] as? String == "undecryptable")
            #expect(message.contains("does not decrypt with this registration's encryption key"), "\(message)")

            // rotate: the new key carries the same encryption key, and fetch still decrypts.
            let rotated = try await sandbox.run(["rotate", "--key", keyId] + sandbox.storeArguments)
            try #require(rotated.status == 0, "\(rotated.summary)")
            let newKeyId = try #require(rotated.lines.first)
            #expect(try await show(sandbox, newKeyId)["encryptionKey"] as? [String: String] == encryptionKey)
            #expect(!FileManager.default.fileExists(atPath: Self.storeFile(sandbox, keyId + ".enc.pem").path))
            let second = try backend.dispatch(deviceId: "phone", channel: "link")
            let afterRotation = try await fetch(sandbox)
            #expect(
                afterRotation.status == 0 && afterRotation.tokens == [first.token, second.token],
                "\(afterRotation.errors)")
        }

        @Test func keyWithoutEncryptionKeyGainsOneAtRegistration() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            try Self.makeOldFormat(sandbox, keyId)
            #expect(try await show(sandbox, keyId)["encryptionKey"] is NSNull)

            // Its passphrase is needed to protect the new key: the wrong one changes nothing.
            let wrong = try await sandbox.run(
                [
                    "register", "--server", backend.baseURL.absoluteString,
                    "--device-id", "phone", "--key", keyId,
                ] + sandbox.storeArguments,
                passphrase: "wrong")
            #expect(wrong.status == 1 && wrong.err.contains("does not open key"), "\(wrong.summary)")
            #expect(try await show(sandbox, keyId)["encryptionKey"] is NSNull)
            #expect(backend.dispatchTargetIds(ofDevice: "phone").isEmpty, "nothing was sent")

            try await register(sandbox, backend, keyId)
            let gained = try #require(try await show(sandbox, keyId)["encryptionKey"] as? [String: String])
            #expect(gained["use"] == "enc")
            #expect(try TestPaths.mode(Self.storeFile(sandbox, keyId + ".enc.pem")) == 0o600)
            let operation = try backend.dispatch(deviceId: "phone", channel: "link")
            try backend.injectFault(EmulatorFault(endpoint: .operations, kind: .undecryptable, count: 1))
            #expect(try await fetch(sandbox).errors.first?["code"] as? String == "invalidResponse", "asked for JOSE")
            #expect(try await fetch(sandbox).tokens == [operation.token])

            // A registration without an encryption key asks for JSON, as before.
            try Self.makeOldFormat(sandbox, keyId)
            let plain = try await fetch(sandbox)
            #expect(plain.status == 0 && plain.tokens == [operation.token], "\(plain.errors)")
        }

        /// A key registered as keys were before encryption keys existed, on device "phone".
        static func registeredOldFormatKey(_ sandbox: CLISandbox, _ backend: ReferenceBackend) async throws -> String {
            let keyId = try await sandbox.generateKey()
            try makeOldFormat(sandbox, keyId)
            try registerWithoutEncryptionKey(sandbox, backend, keyId, deviceId: "phone")
            return keyId
        }

        /// The backend took the new key and the store records it: the rotation is done, even when
        /// the old key's files cannot all be removed. It says so (exit 0), and warns about the old
        /// entry, rather than fail and send the user to rotate again or delete the new key.
        @Test func aRotationIsDoneEvenWhenTheOldKeyCannotBeDeleted() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await Self.registeredOldFormatKey(sandbox, backend)
            // Where the old key's encryption key would be: a directory, which deleting it cannot remove.
            let blocker = Self.storeFile(sandbox, keyId + ".enc.pem")
            try FileManager.default.createDirectory(
                at: blocker.appendingPathComponent("inside"), withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: blocker) }

            let rotated = try await sandbox.run(["rotate", "--key", keyId] + sandbox.storeArguments)
            #expect(rotated.status == 0, "\(rotated.summary)")
            #expect(rotated.err.contains("Warning: key \(keyId) could not be deleted"), "\(rotated.summary)")
            #expect(rotated.err.contains("fetchchannel key delete \(keyId)"), "\(rotated.summary)")
            let newKeyId = try #require(rotated.lines.first)
            #expect(newKeyId != keyId)
            let first = try backend.dispatch(deviceId: "phone", channel: "link")
            let fetched = try await fetch(sandbox)
            #expect(fetched.status == 0 && fetched.tokens == [first.token], "the new key fetches: \(fetched.errors)")
        }

        /// A key registered before encryption keys existed cannot be registered again ('register'
        /// refuses a registered key): its rotation is its next registration, and gives it one.
        @Test func registeredKeyWithoutEncryptionKeyGainsOneAtRotation() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await Self.registeredOldFormatKey(sandbox, backend)
            let first = try backend.dispatch(deviceId: "phone", channel: "link")
            let plain = try await fetch(sandbox)
            #expect(plain.status == 0 && plain.tokens == [first.token], "JSON, as before: \(plain.errors)")

            let rotated = try await sandbox.run(["rotate", "--key", keyId] + sandbox.storeArguments)
            try #require(rotated.status == 0, "\(rotated.summary)")
            let newKeyId = try #require(rotated.lines.first)
            let gained = try #require(
                try await show(sandbox, newKeyId)["encryptionKey"] as? [String: String], "rotation gave none")
            #expect(gained["use"] == "enc")
            #expect(try TestPaths.mode(Self.storeFile(sandbox, newKeyId + ".enc.pem")) == 0o600)
            let exported = try await sandbox.run(
                ["key", "export", "--encryption", "--private"] + sandbox.storeArguments + ["--", newKeyId])
            #expect(exported.out.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"), "protected as the signing key")

            // The backend took it: the answer is now a JWE to it (a JWE to another key is refused).
            try backend.injectFault(EmulatorFault(endpoint: .operations, kind: .undecryptable, count: 1))
            let refused = try await fetch(sandbox)
            #expect(refused.errors.first?["invalidResponseKind"] as? String == "undecryptable", "\(refused.errors)")
            let decrypted = try await fetch(sandbox)
            #expect(decrypted.status == 0 && decrypted.tokens == [first.token], "\(decrypted.errors)")
        }
    }
}

import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

extension CLIOfflineProcessTests {
    /// `fetchchannel key …` run as a child process against a temporary store.
    @Suite struct KeyCommandsProcessTests {
        @Test func binaryIsBuiltNextToTheTests() {
            #expect(
                FileManager.default.isExecutableFile(atPath: CLIProcess.binary.path),
                "no fetchchannel at \(CLIProcess.binary.path)")
        }

        /// A record that no longer reads (it fails `key list` and every lookup) can still be deleted.
        @Test func aKeyWhoseRecordDoesNotReadCanBeDeleted() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            let store = URL(fileURLWithPath: sandbox.store)
            try Data("garbage".utf8).write(to: store.appendingPathComponent(keyId + ".json"))
            let listed = try await sandbox.run(["key", "list"] + sandbox.storeArguments)
            #expect(listed.status == 1, "the store does not read: \(listed.summary)")

            let deleted = try await sandbox.run(["key", "delete"] + sandbox.storeArguments + ["--", keyId])
            #expect(deleted.status == 0 && deleted.lines == [keyId], "\(deleted.summary)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.path).filter { !$0.hasPrefix(".") } == [])
        }

        /// A store that cannot be looked at is an error, not "no store yet": here a path below a
        /// regular file (ENOTDIR; root passes permission checks, so EACCES cannot be shown).
        @Test func aStoreThatCannotBeLookedAtIsAnError() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let file = try sandbox.write("not-a-directory", "x")
            let store = ["--store", file.appendingPathComponent("keys").path]
            let listed = try await sandbox.run(["key", "list"] + store)
            #expect(listed.status == 1 && listed.err.contains("cannot look for the key store"), "\(listed.summary)")
            let redeemed = try await sandbox.run(
                ["redeem", "t", "--redeem-url", "https://127.0.0.1:9/r"] + store, passphrase: nil)
            #expect(
                redeemed.status == 1 && redeemed.err.contains("cannot look for the key store"), "\(redeemed.summary)")
        }

        @Test func generateListShowExportDelete() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let store = sandbox.storeArguments

            // generate: the key id alone on stdout, the diagnostic on stderr.
            let generated = try await sandbox.run(["key", "generate"] + store)
            #expect(generated.status == 0, "\(generated.summary)")
            let keyId = try #require(generated.lines.first)
            #expect(generated.lines.count == 1 && KeyStore.isValidKeyId(keyId), "\(generated.summary)")
            #expect(generated.err.contains("Generated key \(keyId)"))
            let storeURL = URL(fileURLWithPath: sandbox.store)
            #expect(try TestPaths.mode(storeURL) == 0o700)
            #expect(try TestPaths.mode(storeURL.appendingPathComponent(keyId + ".pem")) == 0o600)
            #expect(try TestPaths.mode(storeURL.appendingPathComponent(keyId + ".json")) == 0o600)
            let pem = try String(contentsOf: storeURL.appendingPathComponent(keyId + ".pem"), encoding: .utf8)
            #expect(pem.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))

            // generate --json: exactly {keyId, publicJwk}.
            let generatedJSON = try await sandbox.run(["key", "generate", "--json"] + store)
            #expect(generatedJSON.status == 0, "\(generatedJSON.summary)")
            let object = try #require(try generatedJSON.json() as? [String: Any])
            #expect(Set(object.keys) == ["keyId", "publicJwk"])
            let secondId = try #require(object["keyId"] as? String)
            let jwk = try #require(object["publicJwk"] as? [String: String])
            #expect(Set(jwk.keys) == ["kty", "crv", "x", "y"])
            #expect(try JWK(jsonRepresentation: JSONSerialization.data(withJSONObject: jwk)).thumbprint == secondId)

            // list: both keys, one line each; --json an array.
            let listed = try await sandbox.run(["key", "list"] + store)
            #expect(listed.status == 0 && listed.lines.count == 2, "\(listed.summary)")
            #expect(listed.out.contains(keyId) && listed.out.contains(secondId))
            let listedJSON = try #require(
                try await sandbox.run(["key", "list", "--json"] + store).json() as? [[String: Any]])
            #expect(Set(listedJSON.compactMap { $0["keyId"] as? String }) == [keyId, secondId])
            #expect(listedJSON.allSatisfy { $0["dispatchTargetId"] is NSNull && $0["server"] is NSNull })

            // show, by a unique prefix (after `--`: a short prefix may start with "-").
            let shown = try await sandbox.run(["key", "show"] + store + ["--", String(keyId.prefix(8))])
            #expect(shown.status == 0 && shown.out.contains("Key id:           \(keyId)"), "\(shown.summary)")
            #expect(shown.out.contains("scrypt(N=16384, r=8, p=1), AES-256-CBC"))
            let shownJSON = try #require(
                try await sandbox.run(["key", "show", "--json"] + store + ["--", keyId]).json() as? [String: Any])
            #expect(shownJSON["keyId"] as? String == keyId)

            // export: public PEM, JWK and DER agree.
            let publicPEM = try await sandbox.run(["key", "export"] + store + ["--", keyId])
            #expect(
                publicPEM.status == 0 && publicPEM.out.hasPrefix("-----BEGIN PUBLIC KEY-----"), "\(publicPEM.summary)")
            let publicKey = try P256.Signing.PublicKey(pemRepresentation: publicPEM.out)
            #expect(publicKey.jwkThumbprint == keyId)
            let publicJWK = try await sandbox.run(["key", "export", "--format", "jwk"] + store + ["--", keyId])
            #expect(try JWK(jsonRepresentation: publicJWK.standardOutput).publicKey() == publicKey)
            let publicDER = try await sandbox.run(["key", "export", "--format=der"] + store + ["--", keyId])
            #expect(
                publicDER.status == 0 && publicDER.standardOutput == publicKey.derRepresentation,
                "DER goes to a non-terminal stdout as raw bytes")

            // export --private: encrypted PKCS#8 by default, which opens with the passphrase.
            let privatePEM = try await sandbox.run(["key", "export", "--private"] + store + ["--", keyId])
            #expect(
                privatePEM.status == 0 && privatePEM.out.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"),
                "\(privatePEM.summary)")
            let reopened = try P256.Signing.PrivateKey(
                encryptedPEM: privatePEM.out, passphrase: SecureBytes(Array(CLISandbox.passphrase.utf8)))
            #expect(reopened.publicKey == publicKey)
            let privateDER = try await sandbox.run(
                ["key", "export", "--private", "--format", "der"] + store + ["--", keyId])
            #expect(privateDER.status == 0 && privateDER.standardOutput.first == 0x30, "\(privateDER.summary)")

            // export --private --no-encryption --format jwk: the only way to see d.
            let secretJWK = try await sandbox.run(
                ["key", "export", "--private", "--no-encryption", "--format", "jwk"] + store + ["--", keyId])
            #expect(secretJWK.status == 0 && secretJWK.err.contains("warning"), "\(secretJWK.summary)")
            let secretObject = try #require(try secretJWK.json() as? [String: String])
            let d = try #require(secretObject["d"])
            #expect(try P256.Signing.PrivateKey(jwkRepresentation: secretJWK.standardOutput).publicKey == publicKey)
            // No other output ever carried it.
            for result in [generated, generatedJSON, listed, shown, publicPEM, publicJWK, privatePEM] {
                #expect(!result.out.contains(d) && !result.err.contains(d))
            }
            #expect(!publicDER.standardOutput.base64EncodedString().contains(d))

            // delete: the full id only; then the key is gone.
            let byPrefix = try await sandbox.run(["key", "delete"] + store + ["--", String(keyId.prefix(8))])
            #expect(byPrefix.status == 64, "\(byPrefix.summary)")
            let deleted = try await sandbox.run(["key", "delete"] + store + ["--", keyId])
            #expect(deleted.status == 0 && deleted.out == keyId + "\n", "\(deleted.summary)")
            let afterDelete = try await sandbox.run(["key", "list"] + store)
            #expect(
                afterDelete.lines == afterDelete.lines.filter { !$0.contains(keyId) } && afterDelete.lines.count == 1)
            let again = try await sandbox.run(["key", "delete"] + store + ["--", keyId])
            #expect(again.status == 1 && again.err.hasPrefix("Error: ") && again.out.isEmpty, "\(again.summary)")
        }

        @Test func exportRefusesWhatItMustNot() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            let store = sandbox.storeArguments
            // A private JWK cannot be encrypted; --no-encryption means nothing for a public key.
            let jwk = try await sandbox.run(["key", "export", "--private", "--format", "jwk"] + store + ["--", keyId])
            #expect(jwk.status == 64 && jwk.out.isEmpty, "\(jwk.summary)")
            let publicNoEncryption = try await sandbox.run(
                ["key", "export", "--no-encryption"] + store + ["--", keyId])
            #expect(publicNoEncryption.status == 64, "\(publicNoEncryption.summary)")
            let format = try await sandbox.run(["key", "export", "--format", "xml"] + store + ["--", keyId])
            #expect(format.status == 64 && format.err.contains("expected one of pem, jwk, der"))
            // The wrong passphrase opens nothing and prints nothing.
            let wrong = try await sandbox.run(
                ["key", "export", "--private"] + store + ["--", keyId], passphrase: "wrong")
            #expect(
                wrong.status == 1 && wrong.out.isEmpty && wrong.err.contains("does not open key"), "\(wrong.summary)")
            // No passphrase and no terminal: a usage error, not a hang.
            let none = try await sandbox.run(["key", "export", "--private"] + store + ["--", keyId], passphrase: nil)
            #expect(none.status == 64 && none.out.isEmpty && none.err.contains("not a terminal"), "\(none.summary)")
            // The public key needs no passphrase at all.
            let publicOnly = try await sandbox.run(["key", "export"] + store + ["--", keyId], passphrase: nil)
            #expect(publicOnly.status == 0, "\(publicOnly.summary)")
        }

        /// `--output FILE`: the export goes to a new file that is 0600 from the start (a shell's
        /// `> FILE` is 0644 until the command narrows it); an existing name is never overwritten,
        /// and a failed export leaves no file.
        @Test func exportToAnOutputFileMadePrivateFromTheStart() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            let store = sandbox.storeArguments
            let path = sandbox.root.appendingPathComponent("exported.pem").path
            let written = try await sandbox.run(
                ["key", "export", "--private", "--no-encryption", "--output", path] + store + ["--", keyId])
            #expect(written.status == 0 && written.out.isEmpty, "\(written.summary)")
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(try P256.Signing.PrivateKey(pemRepresentation: text).publicKey.jwkThumbprint == keyId)

            // An existing file (or a link) is refused, and left as it was.
            let again = try await sandbox.run(
                ["key", "export", "--private", "--no-encryption", "--output", path] + store + ["--", keyId])
            #expect(again.status == 1 && again.err.contains("exists"), "\(again.summary)")
            #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
            let link = sandbox.root.appendingPathComponent("link.pem").path
            try FileManager.default.createSymbolicLink(
                atPath: link, withDestinationPath: sandbox.root.appendingPathComponent("elsewhere.pem").path)
            let throughLink = try await sandbox.run(["key", "export", "--output", link] + store + ["--", keyId])
            #expect(throughLink.status == 1, "\(throughLink.summary)")
            #expect(!FileManager.default.fileExists(atPath: sandbox.root.appendingPathComponent("elsewhere.pem").path))

            // A failed export (the wrong passphrase) leaves no file behind.
            let failedPath = sandbox.root.appendingPathComponent("failed.pem").path
            let failed = try await sandbox.run(
                ["key", "export", "--private", "--output", failedPath] + store + ["--", keyId], passphrase: "wrong")
            #expect(failed.status == 1, "\(failed.summary)")
            #expect(!FileManager.default.fileExists(atPath: failedPath))

            // --json goes to the file as well: what standard output would have had.
            let jsonPath = sandbox.root.appendingPathComponent("public.json").path
            let json = try await sandbox.run(
                ["key", "export", "--json", "--output", jsonPath] + store + ["--", keyId])
            #expect(json.status == 0 && json.out.isEmpty, "\(json.summary)")
            let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: jsonPath)))
            #expect((document as? [String: Any])?["keyId"] as? String == keyId)
        }

        /// A working directory removed under the command (getcwd fails) leaves nothing to resolve
        /// a relative path against: it is refused, where before `--output relx.pem` wrote
        /// `/relx.pem`. An absolute path still works.
        @Test func aRelativePathIsRefusedOnceTheWorkingDirectoryIsGone() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            let name = "relx-\(UUID().uuidString).pem"
            defer { try? FileManager.default.removeItem(atPath: "/" + name) }
            let gone = sandbox.file("gone")
            /// `fetchchannel arguments…` started in `gone`, which the shell removes first.
            func runInRemovedDirectory(_ arguments: [String]) async throws -> CLIResult {
                try FileManager.default.createDirectory(at: gone, withIntermediateDirectories: true)
                let child = try CLIProcess([], environment: sandbox.environment())
                child.process.executableURL = URL(fileURLWithPath: "/bin/sh")
                child.process.arguments =
                    ["-c", #"cd "$1" && rmdir "$1" && shift && exec "$0" "$@""#, CLIProcess.binary.path, gone.path]
                    + arguments
                return try await child.runToCompletion()
            }

            let relative = try await runInRemovedDirectory(
                ["key", "export", "--output", name] + sandbox.storeArguments + ["--", keyId])
            #expect(relative.status == 64, "\(relative.summary)")
            #expect(
                relative.err.hasPrefix(
                    "Error: cannot use the relative path '\(name)': the working directory no longer exists; "
                        + "give an absolute path"),
                "\(relative.summary)")
            #expect(!FileManager.default.fileExists(atPath: "/" + name), "nothing was written at /")

            let absolute = sandbox.file("exported.pem").path
            let written = try await runInRemovedDirectory(
                ["key", "export", "--output", absolute] + sandbox.storeArguments + ["--", keyId])
            #expect(written.status == 0 && FileManager.default.fileExists(atPath: absolute), "\(written.summary)")
        }

        @Test func passphraseOnArgvIsImpossible() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            for arguments in [["--passphrase", "hunter2"], ["--passphrase=hunter2"], ["--password", "hunter2"]] {
                let result = try await sandbox.run(
                    ["key", "generate"] + sandbox.storeArguments + arguments, passphrase: nil)
                #expect(result.status == 64, "\(result.summary)")
                #expect(result.out.isEmpty)
                #expect(result.err.contains("never taken from the command line") && !result.err.contains("hunter2"))
            }
            #expect(!FileManager.default.fileExists(atPath: sandbox.store), "no store was created")
        }

        @Test func passphraseFromAFile() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let file = try sandbox.writePrivate("passphrase.txt", "from a file\n")
            let generated = try await sandbox.run(
                ["key", "generate", "--passphrase-file", file.path] + sandbox.storeArguments, passphrase: nil)
            #expect(generated.status == 0, "\(generated.summary)")
            let keyId = try #require(generated.lines.first)
            let opened = try await sandbox.run(
                ["key", "export", "--private"] + sandbox.storeArguments + ["--", keyId], passphrase: "from a file")
            #expect(opened.status == 0, "\(opened.summary)")
        }

        @Test func noEncryptionIsExplicit() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(
                ["key", "generate", "--no-encryption", "--json"] + sandbox.storeArguments, passphrase: nil)
            #expect(result.status == 0 && result.err.contains("unencrypted"), "\(result.summary)")
            let keyId = try #require((try result.json() as? [String: Any])?["keyId"] as? String)
            let pem = try String(
                contentsOf: URL(fileURLWithPath: sandbox.store).appendingPathComponent(keyId + ".pem"), encoding: .utf8)
            #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
            // Exporting it privately still encrypts unless asked not to: with a passphrase to protect it.
            let export = try await sandbox.run(
                ["key", "export", "--private"] + sandbox.storeArguments + ["--", keyId])
            #expect(
                export.status == 0 && export.out.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"), "\(export.summary)"
            )
        }

        @Test func defaultStoreFollowsXDGDataHomeThenHome() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let dataHome = sandbox.file("data")
            let viaXDG = try await sandbox.run(["key", "generate"], extra: ["XDG_DATA_HOME": dataHome.path])
            #expect(viaXDG.status == 0, "\(viaXDG.summary)")
            let xdgId = try #require(viaXDG.lines.first)
            #expect(
                FileManager.default.fileExists(
                    atPath: dataHome.appendingPathComponent("fetchchannel/keys/\(xdgId).json").path))

            let viaHome = try await sandbox.run(["key", "generate"])
            #expect(viaHome.status == 0, "\(viaHome.summary)")
            let homeId = try #require(viaHome.lines.first)
            #expect(
                FileManager.default.fileExists(
                    atPath: sandbox.file("home/.local/share/fetchchannel/keys/\(homeId).json").path))
        }

        @Test func importFixtureKeysAndRefuseOthers() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let store = sandbox.storeArguments
            // An `openssl genpkey` PKCS#8 key and a SEC1 key from Keys/.
            for name in ["demo-device-p256.pem", "rfc7515-a3-p256.pem"] {
                let file = PackageLocations.keys.appendingPathComponent(name)
                let expected = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOf: file, encoding: .utf8))
                    .publicKey.jwkThumbprint
                let imported = try await sandbox.run(["key", "import", file.path] + store)
                #expect(imported.status == 0 && imported.lines == [expected], "\(name): \(imported.summary)")
                let again = try await sandbox.run(["key", "import", file.path] + store)
                #expect(again.status == 1 && again.err.contains("already"), "\(name): \(again.summary)")
            }
            // Its own encrypted export imports into another store with the same passphrase.
            let keyId = try await sandbox.generateKey()
            let exported = try await sandbox.run(["key", "export", "--private"] + store + ["--", keyId])
            let file = try sandbox.write("exported.pem", exported.out)
            let other = ["--store", sandbox.file("other").path]
            let imported = try await sandbox.run(["key", "import", "--json", file.path] + other)
            #expect(
                try imported.status == 0 && (imported.json() as? [String: Any])?["keyId"] as? String == keyId,
                "\(imported.summary)")
            let wrong = try await sandbox.run(
                ["key", "import", file.path, "--store", sandbox.file("third").path], passphrase: "nope")
            #expect(wrong.status == 1 && wrong.err.contains("does not open"), "\(wrong.summary)")

            // An unencrypted key beside the encrypted one (`cat plain.pem enc.pem`) is refused, in
            // either order, before the file is made text (a String is never zeroed); nothing is
            // stored. Before, the encrypted key first was imported.
            let plain = try String(
                contentsOf: PackageLocations.keys.appendingPathComponent("demo-device-p256.pem"), encoding: .utf8)
            let mixedStore = sandbox.file("mixed")
            for (name, text) in [("mixed.pem", plain + exported.out), ("reversed.pem", exported.out + plain)] {
                let mixed = try sandbox.write(name, text)
                let refused = try await sandbox.run(["key", "import", mixed.path, "--store", mixedStore.path])
                #expect(
                    refused.status == 1
                        && refused.err == "Error: \(mixed.path) holds an unencrypted private key beside the "
                            + "encrypted one; give a file with one key\n",
                    "\(refused.summary)")
                #expect(!FileManager.default.fileExists(atPath: mixedStore.path), "nothing was stored")
            }

            // A public key or garbage is refused with a reason.
            let publicFile = try sandbox.write(
                "public.pem", try await sandbox.run(["key", "export"] + store + ["--", keyId]).out)
            let publicImport = try await sandbox.run(["key", "import", publicFile.path] + store)
            #expect(publicImport.status == 1 && publicImport.err.contains("public key"), "\(publicImport.summary)")
            let garbage = try sandbox.write(
                "garbage.pem", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
            let garbageImport = try await sandbox.run(["key", "import", garbage.path] + store)
            #expect(garbageImport.status == 1 && garbageImport.err.hasPrefix("Error: "), "\(garbageImport.summary)")
            let missing = try await sandbox.run(["key", "import", sandbox.file("missing.pem").path] + store)
            #expect(missing.status == 1 && missing.err.contains("cannot read"), "\(missing.summary)")

            // A private JWK imports; a public one, or JSON that is no JWK, is refused as what it is.
            let jwkKey = try P256.Signing.PrivateKey()
            let privateJWK = try sandbox.write(
                "private.jwk",
                String(
                    decoding: try jwkKey.jwkRepresentation(includingPrivateKey: true).withUnsafeBytes { Data($0) },
                    as: UTF8.self))
            let jwkImport = try await sandbox.run(["key", "import", privateJWK.path] + store)
            #expect(
                jwkImport.status == 0 && jwkImport.lines == [jwkKey.publicKey.jwkThumbprint], "\(jwkImport.summary)")
            let publicJWK = try sandbox.write("public.jwk", jwkKey.publicKey.jwk.jsonString)
            let publicJWKImport = try await sandbox.run(["key", "import", publicJWK.path] + store)
            #expect(
                publicJWKImport.status == 1
                    && publicJWKImport.err == "Error: \(publicJWK.path) holds a public JWK (no \"d\"); "
                        + "'key import' needs the private key\n",
                "\(publicJWKImport.summary)")
            let notJSON = try sandbox.write("broken.jwk", #"{"kty": "EC", "#)
            let notJSONImport = try await sandbox.run(["key", "import", notJSON.path] + store)
            #expect(
                notJSONImport.status == 1 && notJSONImport.err.contains("is not a P-256 private key this tool reads")
                    && !notJSONImport.err.contains("public JWK"),
                "\(notJSONImport.summary)")
        }

        /// As 'key generate' does: --no-encryption beside a passphrase file that opens nothing is a
        /// usage error, and a key stored unencrypted is warned about. With an encrypted file the
        /// passphrase opens it, and --no-encryption stores the key without one.
        @Test func importWithoutEncryptionWarnsAndRefusesAPassphraseThatOpensNothing() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let store = sandbox.storeArguments
            let plain = PackageLocations.keys.appendingPathComponent("demo-device-p256.pem").path
            let passphraseFile = try sandbox.writePrivate("passphrase", CLISandbox.passphrase)
            let both = try await sandbox.run(
                ["key", "import", "--no-encryption", "--passphrase-file", passphraseFile.path, plain] + store)
            #expect(both.status == 64 && both.err.contains("do not also give --passphrase-file"), "\(both.summary)")
            #expect(try await sandbox.run(["key", "list"] + store).out.isEmpty, "nothing was stored")

            let unencrypted = try await sandbox.run(["key", "import", "--no-encryption", plain] + store)
            #expect(unencrypted.status == 0, "\(unencrypted.summary)")
            #expect(
                unencrypted.err.contains("warning: the private key is stored unencrypted"), "\(unencrypted.summary)")

            let keyId = try await sandbox.generateKey()
            let exported = try sandbox.write(
                "exported.pem", try await sandbox.run(["key", "export", "--private"] + store + ["--", keyId]).out)
            let opened = try await sandbox.run(
                [
                    "key", "import", "--no-encryption", "--passphrase-file", passphraseFile.path, exported.path,
                    "--store", sandbox.file("other").path,
                ])
            #expect(opened.status == 0 && opened.lines == [keyId], "\(opened.summary)")
            #expect(opened.err.contains("stored unencrypted"), "\(opened.summary)")
        }

        @Test func emptyOrMissingStore() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let list = try await sandbox.run(["key", "list", "--json"] + sandbox.storeArguments)
            #expect(list.status == 0 && list.out == "[]\n", "\(list.summary)")
            let show = try await sandbox.run(["key", "show", "abcdef"] + sandbox.storeArguments)
            #expect(show.status == 1 && show.err.contains("does not exist"), "\(show.summary)")
            _ = try await sandbox.generateKey()
            let notAnId = try await sandbox.run(["key", "show", "a/b"] + sandbox.storeArguments)
            #expect(notAnId.status == 64 && notAnId.err.contains("is not a key id"), "\(notAnId.summary)")
            let noMatch = try await sandbox.run(["key", "show", "!!!!"] + sandbox.storeArguments)
            #expect(noMatch.status == 64, "\(noMatch.summary)")
            let unknown = try await sandbox.run(["key", "show", "zzzzzzzz"] + sandbox.storeArguments)
            #expect(unknown.status == 1 && unknown.err.contains("no key in"), "\(unknown.summary)")
            // A whole key id of no key names the key and the store, not a file of it.
            let absent = String(repeating: "A", count: 43)
            for command in [["key", "show", absent], ["sign", "--key", absent]] {
                let result = try await sandbox.run(command + sandbox.storeArguments)
                #expect(
                    result.status == 1 && result.err.contains("There is no key \(absent) in")
                        && !result.err.contains(".json"), "\(result.summary)")
            }
        }
    }
}

import DeviceSigning
import FetchChannelTestSupport
import FetchChannelVectors
import Foundation
import Testing

extension CLIOfflineProcessTests {
    /// `fetchchannel encrypt` and `fetchchannel decrypt`, as child processes.
    @Suite struct EncryptDecryptProcessTests {
        /// The demo fixture key (TEST ONLY) as an unencrypted PEM, and its public key as PEM and JWK.
        struct KeyFiles {
            let privatePEM: URL
            let publicPEM: URL
            let publicJWK: URL
            let key: P256.KeyAgreement.PrivateKey
        }

        static func keyFiles(in sandbox: CLISandbox) throws -> KeyFiles {
            let privatePEM = PackageLocations.keys.appendingPathComponent("demo-device-p256.pem")
            let pem = try String(contentsOf: privatePEM, encoding: .utf8)
            let key = try P256.KeyAgreement.PrivateKey(pemRepresentation: pem)
            return KeyFiles(
                privatePEM: privatePEM,
                publicPEM: try sandbox.write("public.pem", key.publicKey.pemRepresentation),
                publicJWK: try sandbox.write("public.jwk", key.publicKey.jwk.jsonString), key: key)
        }

        @Test func encryptThenDecryptRoundTrip() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let files = try Self.keyFiles(in: sandbox)
            let plaintext = Data("{\"operations\":[]}\nno newline at the end: é🔑".utf8)
            let runs = [
                ("ECDH-ES", "A256GCM", files.publicPEM), ("ECDH-ES+A128KW", "A128CBC-HS256", files.publicJWK),
                ("ECDH-ES+A256KW", "A256CBC-HS512", files.publicPEM),
            ]
            for (alg, enc, keyFile) in runs {
                let encrypted = try await sandbox.run(
                    ["encrypt", "--public-key", keyFile.path, "--alg", alg, "--enc", enc],
                    passphrase: nil, standardInput: plaintext)
                #expect(
                    encrypted.status == 0 && encrypted.err.isEmpty && encrypted.lines.count == 1,
                    "\(encrypted.summary)")
                let compact = try #require(encrypted.lines.first)
                let header = try CompactJWE(parsing: compact).header
                #expect(header.alg.rawValue == alg && header.enc.rawValue == enc)
                #expect(try JWE.decrypt(compact, with: files.key) == plaintext, "\(alg) \(enc): the library disagrees")

                let decrypted = try await sandbox.run(
                    ["decrypt", "--private-key", files.privatePEM.path, compact],
                    passphrase: nil)
                #expect(decrypted.status == 0 && decrypted.err.isEmpty, "\(decrypted.summary)")
                #expect(decrypted.standardOutput == plaintext, "\(alg) \(enc): the plaintext is printed byte for byte")
            }

            // Defaults, --json, the JWE on standard input, a private JWK.
            let json = try await sandbox.run(
                ["encrypt", "--json", "--public-key", files.publicJWK.path],
                passphrase: nil, standardInput: Data(#"{"a":1}"#.utf8))
            let object = try #require(try json.json() as? [String: Any], "\(json.summary)")
            #expect(object["alg"] as? String == "ECDH-ES" && object["enc"] as? String == "A256GCM")
            let compact = try #require(object["jwe"] as? String)
            let jwk = try files.key.jwkRepresentation(includingPrivateKey: true).withUnsafeBytes { Data($0) }
            let privateJWK = sandbox.file("private.jwk")
            #expect(
                FileManager.default.createFile(
                    atPath: privateJWK.path, contents: jwk,
                    attributes: [.posixPermissions: 0o600]))
            let viaStdin = try await sandbox.run(
                ["decrypt", "--json", "--private-key", privateJWK.path, "-"],
                passphrase: nil, standardInput: Data((compact + "\n").utf8))
            let decrypted = try #require(try viaStdin.json() as? [String: Any], "\(viaStdin.summary)")
            #expect(decrypted["decrypted"] as? Bool == true)
            #expect((decrypted["header"] as? [String: String]) == ["alg": "ECDH-ES", "enc": "A256GCM"])
            #expect((decrypted["plaintext"] as? [String: Int]) == ["a": 1])

            // Bytes that are not UTF-8 text keep every byte, as base64url, under a member of its own
            // (as text each would have become U+FFFD).
            let binary = try JWE.encrypt(Data([0xFF, 0xFE, 0x00, 0x61]), to: files.key.publicKey)
            let opened = try await sandbox.run(
                ["decrypt", "--json", "--private-key", privateJWK.path, binary], passphrase: nil)
            let bytes = try #require(try opened.json() as? [String: Any], "\(opened.summary)")
            #expect(bytes["plaintext"] == nil && bytes["plaintextBase64url"] as? String == "__4AYQ", "\(bytes)")
        }

        /// RFC 7520 §5.5, decrypted with its recipient's key (a published example, TEST ONLY).
        @Test func decryptsRFC7520() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let data = try Data(contentsOf: PackageLocations.vectors.appendingPathComponent(JWEVectors.fileName))
            let file = try JWEVectors.decode(data)
            let vector = try #require(file.cases.first { $0.name == "rfc7520-5.5" })
            let key = try JWEVectors.privateKey(vector.key, in: file)
            let keyFile = sandbox.file("meriadoc.jwk")
            let jwk = try key.jwkRepresentation(includingPrivateKey: true).withUnsafeBytes { Data($0) }
            #expect(
                FileManager.default.createFile(
                    atPath: keyFile.path, contents: jwk,
                    attributes: [.posixPermissions: 0o600]))
            let result = try await sandbox.run(
                ["decrypt", "--private-key", keyFile.path, vector.compact],
                passphrase: nil)
            #expect(result.status == 0, "\(result.summary)")
            #expect(result.out == vector.expected.plaintext)
        }

        @Test func decryptFailuresExitOneWithTheReason() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let files = try Self.keyFiles(in: sandbox)
            let encrypted = try await sandbox.run(
                ["encrypt", "--public-key", files.publicPEM.path, "--enc", "A128CBC-HS256"],
                passphrase: nil, standardInput: Data("secret".utf8))
            let compact = try #require(encrypted.lines.first, "\(encrypted.summary)")
            var parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            parts[4] = String(parts[4].first == "A" ? "B" : "A") + parts[4].dropFirst()
            let tampered = parts.joined(separator: ".")

            let privateKey = ["--private-key", files.privatePEM.path]
            let failed = try await sandbox.run(["decrypt"] + privateKey + [tampered], passphrase: nil)
            #expect(failed.status == 1 && failed.out.isEmpty, "\(failed.summary)")
            #expect(
                failed.err == "Error: the JWE does not decrypt: "
                    + "The JWE does not decrypt with this key (or was altered).\n")
            let json = try await sandbox.run(["decrypt", "--json"] + privateKey + [tampered], passphrase: nil)
            let object = try #require(try json.json() as? [String: Any], "\(json.summary)")
            #expect(json.status == 1)
            #expect(object["decrypted"] as? Bool == false && object["code"] as? String == "decryptionFailed")

            let malformed = try await sandbox.run(["decrypt"] + privateKey + ["a.b.c"], passphrase: nil)
            #expect(malformed.status == 1 && malformed.err.contains("five dot-separated parts"), "\(malformed.summary)")
            let publicAsPrivate = try await sandbox.run(
                ["decrypt", "--private-key", files.publicPEM.path, compact],
                passphrase: nil)
            #expect(
                publicAsPrivate.status == 1 && publicAsPrivate.err.contains("holds a public key"),
                "\(publicAsPrivate.summary)")
            let publicJWKAsPrivate = try await sandbox.run(
                ["decrypt", "--private-key", files.publicJWK.path, compact], passphrase: nil)
            #expect(
                publicJWKAsPrivate.status == 1
                    && publicJWKAsPrivate.err.contains(
                        "holds a public JWK (no \"d\"); decrypting needs the private key"),
                "\(publicJWKAsPrivate.summary)")
            // With --json a key file that cannot be used still answers in JSON on standard output.
            let publicAsPrivateJSON = try await sandbox.run(
                ["decrypt", "--json", "--private-key", files.publicPEM.path, compact], passphrase: nil)
            let refusal = try #require(
                try publicAsPrivateJSON.json() as? [String: Any], "\(publicAsPrivateJSON.summary)")
            #expect(publicAsPrivateJSON.status == 1)
            #expect(refusal["decrypted"] as? Bool == false && refusal["code"] as? String == "unreadableInput")
            #expect((refusal["reason"] as? String)?.contains("holds a public key") == true, "\(refusal)")
            #expect(
                publicAsPrivateJSON.err.hasPrefix("Error: \(files.publicPEM.path) holds a public key"),
                "\(publicAsPrivateJSON.summary)")

            // Nothing the command printed contains the private scalar.
            let scalar = try files.key.rawRepresentation.withUnsafeBytes { Data($0) }
            let forms = [scalar.map { String(format: "%02x", $0) }.joined(), scalar.base64EncodedString()]
            for result in [failed, json, malformed, publicAsPrivate, publicAsPrivateJSON] {
                #expect(!forms.contains { result.out.contains($0) || result.err.contains($0) })
            }
        }

        /// A P-384 key file is refused as a key on the wrong curve, before anything is encrypted or
        /// decrypted: exit 1 (a runtime failure, the command line itself was fine), the file named.
        @Test(.enabled(if: SystemTools.hasOpenSSL, "needs openssl on PATH (apt-get install openssl)"))
        func refusesAP384KeyFile() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let privatePEM = sandbox.file("p384.pem")
            let publicPEM = sandbox.file("p384-public.pem")
            for arguments in [
                ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", privatePEM.path],
                ["pkey", "-in", privatePEM.path, "-pubout", "-out", publicPEM.path],
            ] {
                let made = try await SystemTools.run("openssl", arguments)
                try #require(made.status == 0, "openssl \(arguments): \(made.summary)")
            }

            let encrypted = try await sandbox.run(
                ["encrypt", "--public-key", publicPEM.path], passphrase: nil, standardInput: Data("secret".utf8))
            #expect(encrypted.status == 1 && encrypted.out.isEmpty, "\(encrypted.summary)")
            #expect(
                encrypted.err.hasPrefix("Error: \(publicPEM.path) is not a P-256 public key (PEM PUBLIC KEY or JWK): "),
                "\(encrypted.summary)")
            #expect(encrypted.err.contains("on a curve other than P-256"), "\(encrypted.summary)")

            // A JWE that would decrypt with a P-256 key: the refusal is the key file's.
            let recipient = try P256.KeyAgreement.PrivateKey()
            let compact = try JWE.encrypt(
                Data("secret".utf8), to: recipient.publicKey, algorithm: .ecdhES, encryption: .a256GCM)
            let decrypted = try await sandbox.run(
                ["decrypt", "--private-key", privatePEM.path, compact], passphrase: nil)
            #expect(decrypted.status == 1 && decrypted.out.isEmpty, "\(decrypted.summary)")
            #expect(
                decrypted.err.hasPrefix("Error: \(privatePEM.path) is not a P-256 private key (PEM or private JWK): "),
                "\(decrypted.summary)")
            #expect(decrypted.err.contains("on a curve other than P-256"), "\(decrypted.summary)")
        }

        /// A key file without a PEM PUBLIC KEY block (here a private key in DER, given by mistake)
        /// is refused as such, before its bytes are made text.
        @Test func aPublicKeyFileWithoutAPEMPublicKeyIsRefused() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let der = try P256.KeyAgreement.PrivateKey().derRepresentation.withUnsafeBytes { Data($0) }
            let file = sandbox.file("private.der")
            try der.write(to: file)
            let encrypted = try await sandbox.run(
                ["encrypt", "--public-key", file.path], passphrase: nil, standardInput: Data("secret".utf8))
            #expect(encrypted.status == 1 && encrypted.out.isEmpty, "\(encrypted.summary)")
            #expect(
                encrypted.err.contains("is not a P-256 public key (PEM PUBLIC KEY or JWK): it holds no PEM PUBLIC KEY"),
                "\(encrypted.summary)")
        }

        /// A standard stream the command is started without (`<&-`, `>&-`) is not taken over by a
        /// descriptor the process opens later: before, Dispatch's epoll descriptor became standard
        /// input and `encrypt` read from it ("Invalid argument"). A closed standard input or output
        /// is still an error, not empty input or output thrown away.
        @Test func closedStandardStreamsStayClosedToTheCommand() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let files = try Self.keyFiles(in: sandbox)
            /// `fetchchannel arguments…` with the descriptors `closing` names (`<&-`) closed.
            func run(closing: String, _ arguments: [String]) async throws -> CLIResult {
                let child = try CLIProcess([], environment: sandbox.environment(passphrase: nil))
                child.process.executableURL = URL(fileURLWithPath: "/bin/sh")
                child.process.arguments = ["-c", #"exec "$0" "$@" "# + closing, CLIProcess.binary.path] + arguments
                return try await child.runToCompletion()
            }
            for arguments in [
                ["encrypt", "--public-key", files.publicPEM.path],
                ["decrypt", "--private-key", files.privatePEM.path, "-"],
            ] {
                let unread = try await run(closing: "<&-", arguments)
                #expect(unread.status == 1 && unread.out.isEmpty, "\(arguments): \(unread.summary)")
                #expect(unread.err == "Error: cannot read standard input: it is closed\n", "\(unread.summary)")
            }
            let unwritten = try await run(closing: ">&-", ["--version"])
            #expect(unwritten.status == 1, "\(unwritten.summary)")
            #expect(unwritten.err == "Error: cannot write to standard output\n", "\(unwritten.summary)")
            let silent = try await run(closing: "2>&-", ["encrypt", "--public-key", files.publicPEM.path])
            #expect(silent.status == 0 && silent.lines.count == 1, "empty input, a JWE of it: \(silent.summary)")
        }

        @Test func usageErrorsExit64() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let files = try Self.keyFiles(in: sandbox)
            for arguments in [
                ["encrypt", "--public-key", files.publicPEM.path, "--alg", "dir"],
                ["encrypt", "--public-key", files.publicPEM.path, "--enc", "A128CBC"],
                ["encrypt"], ["decrypt", "--private-key", files.privatePEM.path],
            ] {
                let result = try await sandbox.run(arguments, passphrase: nil, standardInput: Data("x".utf8))
                #expect(result.status == 64 && result.out.isEmpty, "\(arguments): \(result.summary)")
                #expect(
                    result.err.hasPrefix("Error: ") && result.err.contains("See 'fetchchannel"),
                    "\(result.summary)")
            }
        }
    }
}

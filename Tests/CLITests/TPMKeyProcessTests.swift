import DeviceSigning
import FetchChannelEmulator
import Foundation
import Testing

extension CLISubprocessTests {
    /// `fetchchannel key generate --tpm` and what follows, against a software TPM the test starts
    /// (TPM2OPENSSL_TCTI in the child's environment) and a reference backend in this process. No
    /// passphrase is in the environment: a TPM key never asks for one.
    @Suite struct TPMKeyProcessTests {
        static var available: Bool {
            guard let missing = SoftwareTPM.missingPrerequisites else { return true }
            if TestPaths.isCI {
                Issue.record("the TPM CLI tests need \(missing), and CI=true: install swtpm swtpm-tools tpm2-openssl.")
            } else {
                print("⚠️  SKIPPED: the TPM CLI tests: \(missing). These checks did NOT run.")
            }
            return false
        }

        /// This process's OpenSSL module directory override, for children that must agree with
        /// `SoftwareTPM.missingPrerequisites` about whether the provider is installed.
        static var modulesEnvironment: [String: String] {
            ProcessInfo.processInfo.environment["OPENSSL_MODULES"].map { ["OPENSSL_MODULES": $0] } ?? [:]
        }

        /// Starts swtpm on a thread of its own (it blocks until swtpm accepts).
        static func startTPM() async throws -> SoftwareTPM {
            try await withCheckedThrowingContinuation { continuation in
                Thread { continuation.resume(with: Result { try SoftwareTPM() }) }.start()
            }
        }

        @Test func generateListShowExportRegisterFetchRotate() async throws {
            guard Self.available else { return }
            let tpm = try await Self.startTPM()
            defer { tpm.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let store = sandbox.storeArguments
            let tcti = ["TPM2OPENSSL_TCTI": tpm.tcti]
            /// `keyId` goes last, after `--`.
            func run(_ arguments: [String], keyId: String? = nil) async throws -> CLIResult {
                try await sandbox.run(
                    arguments + store + (keyId.map { ["--", $0] } ?? []), passphrase: nil, extra: tcti)
            }

            // generate --tpm: no passphrase asked; the key file is the TPM's TSS2 PEM, 0600.
            let generated = try await run(["key", "generate", "--tpm"])
            #expect(generated.status == 0, "\(generated.summary)")
            let keyId = try #require(generated.lines.first)
            #expect(KeyStore.isValidKeyId(keyId))
            #expect(
                generated.err.contains("TPM 2.0 (not exportable)") && !generated.err.contains("warning"),
                "\(generated.summary)")
            let pemURL = URL(fileURLWithPath: sandbox.store).appendingPathComponent(keyId + ".pem")
            #expect(try TestPaths.mode(pemURL) == 0o600)
            #expect(try String(contentsOf: pemURL, encoding: .utf8).hasPrefix("-----BEGIN TSS2 PRIVATE KEY-----"))

            // list and show say TPM 2.0 (not exportable).
            let listed = try await run(["key", "list"])
            let listedLine = listed.lines.first { $0.hasPrefix(keyId) } ?? ""
            #expect(listed.status == 0 && listedLine.hasSuffix("  TPM 2.0 (not exportable)"), "\(listed.summary)")
            let listedJSON = try #require(try await run(["key", "list", "--json"]).json() as? [[String: Any]])
            #expect(listedJSON.first?["protection"] as? String == "TPM 2.0 (not exportable)")
            let shown = try await run(["key", "show"], keyId: keyId)
            #expect(shown.out.contains("Protection:       TPM 2.0 (not exportable)"), "\(shown.summary)")

            // export: the public key works; --private is refused, saying why.
            let publicPEM = try await run(["key", "export"], keyId: keyId)
            #expect(publicPEM.status == 0, "\(publicPEM.summary)")
            #expect(try P256.Signing.PublicKey(pemRepresentation: publicPEM.out).jwkThumbprint == keyId)
            let refused = try await run(["key", "export", "--private", "--no-encryption"], keyId: keyId)
            #expect(refused.status == 1 && refused.out.isEmpty, "\(refused.summary)")
            #expect(
                refused.err.contains("never leaves the TPM") && refused.err.contains("cannot be exported"),
                "\(refused.summary)")
            // Its encryption key is made in the same TPM: a TSS2 PEM, never exportable either.
            let encryptionURL = URL(fileURLWithPath: sandbox.store).appendingPathComponent(keyId + ".enc.pem")
            let encryptionPEM = try String(contentsOf: encryptionURL, encoding: .utf8)
            #expect(encryptionPEM.hasPrefix("-----BEGIN TSS2 PRIVATE KEY-----"))
            let record = try #require(try await run(["key", "show", "--json"], keyId: keyId).json() as? [String: Any])
            let encryptionKey = try #require(record["encryptionKey"] as? [String: String], "\(record)")
            let refusedEncryption = try await run([
                "key", "export", "--encryption", "--private", "--no-encryption",
                keyId,
            ])
            #expect(refusedEncryption.status == 1, "\(refusedEncryption.summary)")
            #expect(refusedEncryption.err.contains("private encryption key never leaves"), "\(refusedEncryption.err)")

            // register and fetch with the TPM key, end to end against the reference backend.
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let registered = try await run([
                "register", "--server", backend.baseURL.absoluteString,
                "--device-id", "tpm-device", "--key", keyId,
            ])
            #expect(registered.status == 0, "\(registered.summary)")
            let operation = try backend.dispatch(deviceId: "tpm-device", channel: "firebase-cloud-messaging")
            let fetched = try await run(["fetch", "--json"])
            #expect(fetched.status == 0, "\(fetched.summary)")
            let tokens = ((try fetched.json() as? [String: Any])?["operations"] as? [[String: Any]] ?? []).compactMap {
                (($0["payload"] as? [String: Any])?["redeemData"] as? [String: Any])?["token"] as? String
            }
            #expect(tokens == [operation.token], "\(fetched.summary)")

            // rotate: the replacement of a TPM key is a TPM key again.
            let rotated = try await run(["rotate", "--key", keyId])
            #expect(rotated.status == 0, "\(rotated.summary)")
            let newKeyId = try #require(rotated.lines.first)
            let newRecord = try #require(try await run(["key", "show", "--json", newKeyId]).json() as? [String: Any])
            #expect(newRecord["protection"] as? String == "TPM 2.0 (not exportable)", "\(newRecord)")
            #expect(newRecord["encryptionKey"] as? [String: String] == encryptionKey, "rotation keeps it")
            let fetchedAgain = try await run(["fetch", "--json"])
            #expect(fetchedAgain.status == 0, "the rotated TPM key signs and decrypts: \(fetchedAgain.summary)")

            // The TPM gone: the fetch reports deviceProtectionError naming the TCTI, and exits 1.
            tpm.stop()
            let withoutTPM = try await run(["fetch", "--json"])
            #expect(withoutTPM.status == 1, "\(withoutTPM.summary)")
            let errors = (try withoutTPM.json() as? [String: Any])?["errors"] as? [[String: Any]] ?? []
            #expect(
                errors.count == 1 && errors.first?["code"] as? String == "deviceProtectionError",
                "\(withoutTPM.summary)")
            #expect((errors.first?["message"] as? String)?.contains(tpm.tcti) == true, "\(withoutTPM.summary)")
        }

        /// A TPM key's rotation whose answer is a server error after the change: the backend is
        /// asked with the new and the old key, one TPM key loaded beside the old one at a time (a
        /// software TPM has no resource manager), and the rotation completes.
        @Test func aTPMKeysRotationAppliedBeforeAServerErrorCompletes() async throws {
            guard Self.available else { return }
            let tpm = try await Self.startTPM()
            defer { tpm.stop() }
            let backend = try DispatchTargetBackendStandIn()
            defer { backend.stop() }
            backend.script.withLock { $0.patchStatusAfterApplying = 500 }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            func run(_ arguments: [String]) async throws -> CLIResult {
                try await sandbox.run(
                    arguments + sandbox.storeArguments, passphrase: nil, extra: ["TPM2OPENSSL_TCTI": tpm.tcti])
            }
            let oldKeyId = try #require(try await run(["key", "generate", "--tpm"]).lines.first)
            let registered = try await run([
                "register", "--server", backend.baseURL.absoluteString, "--device-id", "tpm-9", "--key", oldKeyId,
            ])
            #expect(registered.status == 0, "\(registered.summary)")
            let rotated = try await run(["rotate", "--key", oldKeyId, "--json"])
            #expect(rotated.status == 0, "\(rotated.summary)")
            #expect(rotated.err.contains("accepts the new key"), "\(rotated.summary)")
        }

        /// A TPM key registered before encryption keys existed: its rotation makes the new key's
        /// encryption key in the TPM too, beside the old and the new signing key.
        @Test func rotatingATPMKeyWithoutEncryptionKeyMakesOneInTheTPM() async throws {
            guard Self.available else { return }
            let tpm = try await Self.startTPM()
            defer { tpm.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let tcti = ["TPM2OPENSSL_TCTI": tpm.tcti]
            func run(_ arguments: [String]) async throws -> CLIResult {
                try await sandbox.run(arguments + sandbox.storeArguments, passphrase: nil, extra: tcti)
            }
            let keyId = try #require(try await run(["key", "generate", "--tpm"]).lines.first)
            try EncryptionKeyProcessTests.makeOldFormat(sandbox, keyId)
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            try EncryptionKeyProcessTests.registerWithoutEncryptionKey(sandbox, backend, keyId, deviceId: "tpm-device")

            let rotated = try await run(["rotate", "--key", keyId])
            try #require(rotated.status == 0, "\(rotated.summary)")
            let newKeyId = try #require(rotated.lines.first)
            let file = EncryptionKeyProcessTests.storeFile(sandbox, newKeyId + ".enc.pem")
            #expect(try String(contentsOf: file, encoding: .utf8).hasPrefix("-----BEGIN TSS2 PRIVATE KEY-----"))
            let operation = try backend.dispatch(deviceId: "tpm-device", channel: "link")
            let fetched = try await run(["fetch", "--json"])
            #expect(fetched.status == 0, "the new TPM key signs and decrypts: \(fetched.summary)")
            #expect(fetched.out.contains(operation.token), "\(fetched.summary)")
            try backend.injectFault(EmulatorFault(endpoint: .operations, kind: .undecryptable, count: 1))
            let refused = try await run(["fetch", "--json"])
            #expect(refused.status == 1 && refused.out.contains("undecryptable"), "asked for JOSE: \(refused.summary)")
        }

        @Test func benchReportsTheTPMSignRowOrSaysItWasSkipped() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(
                ["bench", "--json", "--seconds", "0.05", "--rows", "tpm-sign"],
                passphrase: nil, extra: Self.modulesEnvironment)
            #expect(result.status == 0, "\(result.summary)")
            let rows = try #require(try result.json() as? [[String: Any]], "\(result.summary)")
            let row = try #require(rows.first)
            #expect(rows.count == 1 && row["name"] as? String == "tpm-sign" && row["target"] as? String == "reported")
            #expect((row["baseline"] as? Double ?? 0) > 0, "the software signing rate is the baseline: \(row)")
            if SoftwareTPM.missingPrerequisites == nil {
                #expect((row["value"] as? Double ?? 0) > 0 && row["ratio"] is NSNumber, "\(row)")
                #expect(row["met"] as? Bool == true, "\(row)")
            } else {
                #expect((row["unit"] as? String)?.hasPrefix("skipped:") == true, "\(row)")
                #expect(row["met"] as? Bool == false, "nothing measured: \(row)")
            }
        }

        @Test func demoShowsATPMBoundKeyFetchingOrSaysItSkippedIt() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(["demo"], passphrase: nil, extra: Self.modulesEnvironment)
            #expect(result.status == 0, "\(result.summary)")
            if SoftwareTPM.missingPrerequisites == nil {
                #expect(
                    result.out.contains("fetched beside the software key")
                        && result.out.contains("TPM 2.0 (not exportable), private export refused: yes")
                        && result.out.contains("among them: yes"), "\(result.out)")
            } else {
                #expect(result.out.contains("11. Skipped the TPM-bound key: "), "\(result.out)")
            }
        }

        @Test func generateTPMRefusesPassphraseOptions() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let arguments = ["key", "generate", "--tpm", "--no-encryption"] + sandbox.storeArguments
            let result = try await sandbox.run(arguments, passphrase: nil)
            #expect(result.status == 64 && result.err.contains("--tpm"), "\(result.summary)")
        }

        @Test func unreachableTPMIsARuntimeErrorNamingTheTCTI() async throws {
            guard Self.available else { return }
            let port = try #require(SoftwareTPM.refusedPort())
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let tcti = "swtpm:host=127.0.0.1,port=\(port)"
            let result = try await sandbox.run(
                ["key", "generate", "--tpm"] + sandbox.storeArguments, passphrase: nil,
                extra: ["TPM2OPENSSL_TCTI": tcti])
            #expect(result.status == 1 && result.out.isEmpty, "\(result.summary)")
            #expect(result.err.contains("Error: ") && result.err.contains(tcti), "\(result.summary)")
        }

        /// A TPM2OPENSSL_TCTI longer than the 1024 bytes tss2 takes is refused, saying so.
        @Test func anOverLongTCTIVariableIsRefusedSayingSo() async throws {
            guard Self.available else { return }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let tcti = "swtpm:host=127.0.0.1,port=1," + String(repeating: "x", count: 1000)
            let result = try await sandbox.run(
                ["key", "generate", "--tpm"] + sandbox.storeArguments, passphrase: nil,
                extra: Self.modulesEnvironment.merging(["TPM2OPENSSL_TCTI": tcti]) { $1 })
            #expect(result.status == 1 && result.out.isEmpty, "\(result.summary)")
            #expect(
                result.err.contains(
                    "TPM2OPENSSL_TCTI is \(tcti.utf8.count) bytes; a TCTI configuration is at most 1024"),
                "\(result.summary)")
        }

        /// Without TPM2OPENSSL_TCTI, or with it empty, the TPM is the kernel's resource manager:
        /// never tss2's default search, whose last stop is a simulator on localhost:2321 that any
        /// local user could run and so be handed the key generated "in the TPM".
        /// Skipped (and shown so) where /dev/tpmrm0 exists: the default would reach a real TPM.
        @Test(
            .enabled(if: !FileManager.default.fileExists(atPath: "/dev/tpmrm0"), "this machine has a kernel TPM"),
            arguments: [nil, ""] as [String?])
        func withoutATCTITheTPMIsTheKernelsResourceManager(variable: String?) async throws {
            guard Self.available else { return }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(
                ["key", "generate", "--tpm"] + sandbox.storeArguments, passphrase: nil,
                extra: Self.modulesEnvironment.merging(variable.map { ["TPM2OPENSSL_TCTI": $0] } ?? [:]) { $1 })
            #expect(result.status == 1 && result.out.isEmpty, "\(result.summary)")
            #expect(result.err.contains("TCTI \"device:/dev/tpmrm0\" (the default"), "\(result.summary)")
            #expect(!result.err.contains("2321"), "\(result.summary)")
        }
    }
}

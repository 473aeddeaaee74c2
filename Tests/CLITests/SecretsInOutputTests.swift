import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

extension CLISubprocessTests {
    /// No output of the CLI — data, diagnostics, errors, `--json` — contains the private key, in
    /// any of the forms it could leak as: hex (either case), base64, base64url, or a line of its
    /// unencrypted PEM. The only exception is an explicitly requested private export.
    @Suite struct SecretsInOutputTests {
        /// The forms of the fixture key's secret to look for in every output.
        static func secretForms(of key: P256.Signing.PrivateKey) throws -> [String] {
            let scalar = try key.rawRepresentation.withUnsafeBytes { Array($0) }
            let der = try key.derRepresentation.withUnsafeBytes { Array($0) }
            let pem = try key.pemRepresentation.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            let hex = scalar.map { String(format: "%02x", $0) }.joined()
            let base64 = Data(scalar).base64EncodedString()
            let base64url = base64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            // Whole PEM body lines of the private DER (the scalar sits in them), and the DER in hex.
            let pemLines = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") && $0.count >= 40 }.map(
                String.init)
            let derHex = der.map { String(format: "%02x", $0) }.joined()
            // Long enough prefixes to be unambiguous, short enough to catch truncated dumps.
            return [
                hex, hex.uppercased(), String(hex.prefix(24)), base64, String(base64.prefix(20)), base64url,
                String(base64url.prefix(20)), derHex,
            ] + pemLines
        }

        @Test func noCommandPrintsThePrivateKey() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let fixture = PackageLocations.keys.appendingPathComponent("demo-device-p256.pem")
            let key = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOf: fixture, encoding: .utf8))
            let forms = try Self.secretForms(of: key)
            let store = sandbox.storeArguments

            let imported = try await sandbox.run(["key", "import", fixture.path] + store)
            #expect(imported.status == 0, "\(imported.summary)")
            let keyId = key.publicKey.jwkThumbprint
            let wrongPassphrase = try sandbox.writePrivate("wrong.txt", "not the passphrase\n")

            let runs: [[String]] = [
                ["key", "list"] + store, ["key", "list", "--json"] + store,
                ["key", "show"] + store + ["--", keyId], ["key", "show", "--json"] + store + ["--", keyId],
                ["key", "export"] + store + ["--", keyId],
                ["key", "export", "--format", "jwk"] + store + ["--", keyId],
                ["key", "export", "--private"] + store + ["--", keyId],  // encrypted PKCS#8: not the secret in clear
                ["key", "export", "--private", "--passphrase-file", wrongPassphrase.path] + store + ["--", keyId],
                ["sign", "--key", keyId, "--dispatch-target", "target-1"] + store,
                ["sign", "--key", keyId, "--dispatch-target", "target-1", "--json"] + store,
                ["sign", "--key", keyId, "--dispatch-target", "target-1", "--passphrase-file", wrongPassphrase.path]
                    + store,
                ["register", "--server", "http://127.0.0.1:1", "--device-id", "d", "--key", keyId] + store,
                ["fetch", "--json"] + store, ["fetch"] + store,
                ["key", "import", fixture.path] + store,  // already there: an error that names the key
                ["key", "show", "nope"] + store,
                ["key", "generate", "--passphrase", "x"] + store,
            ]
            for arguments in runs {
                let result = try await sandbox.run(arguments)
                for form in forms {
                    #expect(
                        !result.out.contains(form) && !result.err.contains(form),
                        "fetchchannel \(arguments.joined(separator: " ")) printed key material (\(form.prefix(8))…)")
                }
            }

            // The explicit private export is the one place the secret may appear — and it does.
            let explicit = try await sandbox.run(
                ["key", "export", "--private", "--no-encryption"] + store + ["--", keyId])
            #expect(explicit.status == 0, "\(explicit.summary)")
            #expect(
                forms.contains { explicit.out.contains($0) },
                "the explicit export must contain the key (the check can see it)")
        }
    }
}

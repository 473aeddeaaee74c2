import Foundation
import Testing

extension CLISubprocessTests {
    /// `--ca-file` and `--pin`: checked before any request, refused where they mean nothing.
    @Suite struct TLSTrustOptionsProcessTests {
        @Test func trustOptionsAreCheckedBeforeAnyRequest() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyId = try await sandbox.generateKey()
            let ca = try sandbox.write("ca.pem", "-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n")
            let base = ["register", "--device-id", "phone-1", "--key", keyId] + sandbox.storeArguments

            let plain = try await sandbox.run(base + ["--server", "http://127.0.0.1:9", "--ca-file", ca.path])
            #expect(plain.status == 64 && plain.err.contains("apply to https:// servers only"), "\(plain.summary)")

            let badPin = try await sandbox.run(base + ["--server", "https://127.0.0.1:9", "--pin", "sha256//nope"])
            #expect(badPin.status == 64 && badPin.err.contains("is not a pin"), "\(badPin.summary)")

            let missing = try await sandbox.run(base + ["--server", "https://127.0.0.1:9", "--ca-file", sandbox.file("none.pem").path])
            #expect(missing.status == 64 && missing.err.contains("cannot read the CA file"), "\(missing.summary)")

            let skew = try await sandbox.run(["skew", "--server", "http://127.0.0.1:9", "--pin", "sha256//nope"])
            #expect(skew.status == 64, "\(skew.summary)")

            let shown = try await sandbox.run(["key", "show", keyId, "--json"] + sandbox.storeArguments)
            let object = try #require(try shown.json() as? [String: Any], "\(shown.summary)")
            #expect(object["caFile"] is NSNull && (object["pins"] as? [String]) == [], "nothing stored: \(object)")
        }
    }
}

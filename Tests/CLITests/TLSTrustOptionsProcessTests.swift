import FetchChannelEmulator
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

            let missing = try await sandbox.run(
                base + ["--server", "https://127.0.0.1:9", "--ca-file", sandbox.file("none.pem").path])
            #expect(missing.status == 64 && missing.err.contains("cannot read the CA file"), "\(missing.summary)")

            let skew = try await sandbox.run(["skew", "--server", "http://127.0.0.1:9", "--pin", "sha256//nope"])
            #expect(skew.status == 64, "\(skew.summary)")

            // A CA file reached through a symbolic link (as system bundles and mounted secrets are)
            // is a regular file: the command goes on to the network (nothing listens on port 9).
            let link = sandbox.file("ca-link.pem")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: ca)
            let linked = try await sandbox.run(["skew", "--server", "https://127.0.0.1:9", "--ca-file", link.path])
            #expect(linked.status == 1 && !linked.err.contains("not a regular file"), "\(linked.summary)")
            let fifo = sandbox.file("ca-fifo.pem")
            #expect(mkfifo(fifo.path, 0o600) == 0)
            let piped = try await sandbox.run(["skew", "--server", "https://127.0.0.1:9", "--ca-file", fifo.path])
            #expect(piped.status == 64 && piped.err.contains("not a regular file"), "\(piped.summary)")

            let shown = try await sandbox.run(["key", "show", "--json"] + sandbox.storeArguments + ["--", keyId])
            let object = try #require(try shown.json() as? [String: Any], "\(shown.summary)")
            #expect(object["caFile"] is NSNull && (object["pins"] as? [String]) == [], "nothing stored: \(object)")
        }

        /// Against the reference backend over HTTPS: the trust is checked on the registration
        /// itself, stored with it, and used by fetch.
        @Test func registerChecksAndStoresTheTrustThatFetchThenUses() async throws {
            let backend = try ReferenceBackend.start(tls: .generated)
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let caPEM = try #require(backend.tlsCertificateAuthorityPEM)
            let pin = try #require(backend.tlsPin)
            let ca = try sandbox.write("ca.pem", caPEM)
            let server = backend.baseURL.absoluteString
            #expect(server.hasPrefix("https://"))
            let keyId = try await sandbox.generateKey()
            let base =
                ["register", "--server", server, "--device-id", "phone-7", "--key", keyId] + sandbox.storeArguments

            // The system CAs do not know this backend; a wrong pin does not match it: nothing is stored.
            let untrusted = try await sandbox.run(base)
            #expect(untrusted.status == 1 && untrusted.err.contains("tlsUntrustedCertificate"), "\(untrusted.summary)")
            let wrongPin = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()
            let pinned = try await sandbox.run(base + ["--ca-file", ca.path, "--pin", wrongPin])
            #expect(pinned.status == 1 && pinned.err.contains("tlsPinMismatch"), "\(pinned.summary)")
            #expect(backend.statistics.requests(to: .targets) == 0, "no registration reached the backend")

            // The same pin given twice is stored (and shown) once.
            let registered = try await sandbox.run(base + ["--ca-file", ca.path, "--pin", pin, "--pin", pin])
            #expect(registered.status == 0, "\(registered.summary)")
            let shown = try await sandbox.run(["key", "show", "--json"] + sandbox.storeArguments + ["--", keyId])
            let object = try #require(try shown.json() as? [String: Any], "\(shown.summary)")
            #expect(object["caFile"] as? String == ca.path && (object["pins"] as? [String]) == [pin], "\(object)")

            let operation = try backend.dispatch(deviceId: "phone-7", channel: "png-qr-code")
            let fetched = try await sandbox.run(["fetch", "--json"] + sandbox.storeArguments)
            #expect(fetched.status == 0 && fetched.out.contains(operation.token), "\(fetched.summary)")
        }
    }
}

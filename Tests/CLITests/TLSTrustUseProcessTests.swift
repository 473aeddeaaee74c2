import FetchChannelEmulator
import Foundation
import Testing

extension CLISubprocessTests {
    /// The TLS trust `register` stores (`--ca-file`, `--pin`) in use afterwards, against the
    /// reference backend over HTTPS with a CA the system does not know: shown by `key show`, taken
    /// by `redeem` and `rotate`, kept by the rotated key. `skew` takes the same options.
    @Suite struct TLSTrustUseProcessTests {
        /// Registers a new key of `sandbox` with `backend` as `deviceId`, trusting the backend's CA
        /// file (written to the sandbox) and, when `pinned`, pinning its key; returns the key id,
        /// CA file and pin.
        static func register(
            _ sandbox: CLISandbox, _ backend: ReferenceBackend, deviceId: String, pinned: Bool = true
        ) async throws -> (keyId: String, caFile: String, pin: String) {
            let ca = try sandbox.write("ca.pem", try #require(backend.tlsCertificateAuthorityPEM))
            let pin = try #require(backend.tlsPin)
            let keyId = try await sandbox.generateKey()
            let registered = try await sandbox.run(
                [
                    "register", "--server", backend.baseURL.absoluteString, "--device-id", deviceId, "--key", keyId,
                    "--ca-file", ca.path,
                ] + (pinned ? ["--pin", pin] : []) + sandbox.storeArguments)
            try #require(registered.status == 0, "\(registered.summary)")
            return (keyId, ca.path, pin)
        }

        /// A further key of the device is registered with the first key's signature, which must
        /// travel under the first key's trust: before, a command line without its pin sent that
        /// fresh signature over a connection checked against the CA alone.
        @Test func aSiblingSignsOnlyUnderItsOwnTrust() async throws {
            let backend = try ReferenceBackend.start(tls: .generated)
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let (first, caFile, pin) = try await Self.register(sandbox, backend, deviceId: "phone-9")
            let requestsBefore = backend.serverStatistics.totalRequests
            let second = try await sandbox.generateKey()
            let base = [
                "register", "--server", backend.baseURL.absoluteString, "--device-id", "phone-9", "--key", second,
                "--ca-file", caFile,
            ]
            let weaker = try await sandbox.run(base + sandbox.storeArguments)
            #expect(
                weaker.status == 1 && weaker.err.contains("Give its --ca-file and its pins"), "\(weaker.summary)")
            #expect(backend.serverStatistics.totalRequests == requestsBefore, "nothing was sent")
            let same = try await sandbox.run(base + ["--pin", pin] + sandbox.storeArguments)
            #expect(same.status == 0 && same.err.contains("with key \(first)"), "\(same.summary)")
        }

        /// A wrong pin of the right form: 32 bytes that are no key's digest.
        static let wrongPin = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()

        /// The text form says which CA file and pins the key's requests are checked with, as the
        /// JSON form does: someone reading it learns why a fetch fails after the CA is replaced.
        @Test func keyShowTextShowsTheStoredTrust() async throws {
            let backend = try ReferenceBackend.start(tls: .generated)
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let (keyId, caFile, pin) = try await Self.register(sandbox, backend, deviceId: "phone-1")

            let shown = try await sandbox.run(
                ["key", "show"] + sandbox.storeArguments + ["--", keyId], passphrase: nil)
            #expect(shown.status == 0, "\(shown.summary)")
            /// The value of the row `name` ("Name:   value").
            func row(_ name: String) -> String? {
                shown.lines.first { $0.hasPrefix(name + ":") }?.dropFirst(name.count + 1)
                    .trimmingCharacters(in: .whitespaces)
            }
            #expect(row("Server") == backend.baseURL.absoluteString, "\(shown.summary)")
            #expect(row("TLS trust") == "CA file \(caFile), pinned to \(pin)", "\(shown.summary)")
        }

        /// `skew` over HTTPS checks the certificate as `register` does: the CA file makes the chain
        /// trusted, and a pin that matches no key of the chain refuses it.
        @Test func skewOverHTTPSChecksTheCAFileAndThePin() async throws {
            let backend = try ReferenceBackend.start(tls: .generated)
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let ca = try sandbox.write("ca.pem", try #require(backend.tlsCertificateAuthorityPEM))
            let pin = try #require(backend.tlsPin)
            let base = ["skew", "--server", backend.baseURL.absoluteString, "--samples", "1"]

            let trusted = try await sandbox.run(base + ["--ca-file", ca.path, "--pin", pin, "--json"], passphrase: nil)
            #expect(trusted.status == 0, "\(trusted.summary)")
            let object = try #require(try trusted.json() as? [String: Any], "\(trusted.summary)")
            #expect(object["withinTolerance"] as? Bool == true, "\(object)")

            let untrusted = try await sandbox.run(base, passphrase: nil)
            #expect(
                untrusted.status == 1 && untrusted.err.contains("tlsUntrustedCertificate"), "\(untrusted.summary)")
            let wrongPin = try await sandbox.run(
                base + ["--ca-file", ca.path, "--pin", Self.wrongPin], passphrase: nil)
            #expect(
                wrongPin.status == 1 && wrongPin.out.isEmpty && wrongPin.err.contains("tlsPinMismatch"),
                "\(wrongPin.summary)")
        }

        /// `redeem` without `--ca-file`/`--pin` takes the trust stored with the registration whose
        /// backend holds the redeem URL; without that registration the system CAs refuse the chain.
        @Test func redeemUsesTheTrustStoredWithTheRegistration() async throws {
            let backend = try ReferenceBackend.start(tls: .generated)
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            _ = try await Self.register(sandbox, backend, deviceId: "phone-2")
            let operation = try backend.dispatch(deviceId: "phone-2", channel: "link")

            let fetched = try await sandbox.run(["fetch", "--json"] + sandbox.storeArguments)
            #expect(fetched.status == 0, "\(fetched.summary)")
            let object = try #require(try fetched.json() as? [String: Any], "\(fetched.summary)")
            let redeemData = try #require(
                (object["operations"] as? [[String: Any]])?.compactMap {
                    ($0["payload"] as? [String: Any])?["redeemData"] as? [String: Any]
                }.first, "\(fetched.summary)")
            let token = try #require(redeemData["token"] as? String)
            let redeemURL = try #require(redeemData["redeemUrl"] as? String)
            #expect(token == operation.token && redeemURL.hasPrefix("https://"), "\(redeemData)")
            let redeem = ["redeem", "--redeem-url", redeemURL, "--json"]

            // A store without the registration: the system CAs, which do not know this backend.
            let elsewhere = try await sandbox.run(
                redeem + ["--store", sandbox.file("other-store").path, "--", token], passphrase: nil)
            #expect(
                elsewhere.status == 1 && elsewhere.err.contains("tlsUntrustedCertificate"), "\(elsewhere.summary)")
            #expect(backend.statistics.redemptions[token] == nil, "no redemption reached the backend")

            let redeemed = try await sandbox.run(redeem + sandbox.storeArguments + ["--", token], passphrase: nil)
            #expect(redeemed.status == 0, "\(redeemed.summary)")
            let answer = try #require(try redeemed.json() as? [String: Any], "\(redeemed.summary)")
            #expect(answer["redeemed"] as? Bool == true && answer["op"] as? String == "Auth", "\(answer)")
            #expect(backend.statistics.redemptions[token] == 1, "redeemed exactly once")
        }

        /// Two registrations of one backend with different trust (one device pinned, another not):
        /// `redeem` without `--ca-file`/`--pin` cannot tell which the operation came from and
        /// sends nothing; it used to take the first record's trust, whichever that was.
        @Test func redeemRefusesRegistrationsThatDisagreeOnTheTrust() async throws {
            let backend = try ReferenceBackend.start(tls: .generated)
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            _ = try await Self.register(sandbox, backend, deviceId: "phone-4")
            _ = try await Self.register(sandbox, backend, deviceId: "phone-5", pinned: false)
            let operation = try backend.dispatch(deviceId: "phone-5", channel: "link")
            let redeemed = try await sandbox.run(
                ["redeem", "--redeem-url", operation.redeemURL] + sandbox.storeArguments + ["--", operation.token],
                passphrase: nil)
            #expect(
                redeemed.status == 1 && redeemed.err.contains("different TLS trust")
                    && redeemed.err.contains("--ca-file/--pin"), "\(redeemed.summary)")
            #expect(backend.statistics.redemptions[operation.token] == nil, "nothing reached the backend")
        }

        /// `rotate` sends its update with the stored trust (the system CAs would refuse this
        /// backend), and the new key inherits that trust, so the next fetch works.
        @Test func rotateUsesTheStoredTrustAndTheNewKeyKeepsIt() async throws {
            let backend = try ReferenceBackend.start(tls: .generated)
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let store = sandbox.storeArguments
            let (oldKeyId, caFile, pin) = try await Self.register(sandbox, backend, deviceId: "phone-3")

            let rotated = try await sandbox.run(["rotate", "--key", oldKeyId, "--json"] + store)
            #expect(rotated.status == 0, "\(rotated.summary)")
            let answer = try #require(try rotated.json() as? [String: Any], "\(rotated.summary)")
            let newKeyId = try #require(answer["newKeyId"] as? String)
            #expect(newKeyId != oldKeyId)
            #expect(backend.statistics.requests(to: .targets) == 2, "the registration and the rotation")

            let shown = try await sandbox.run(["key", "show", "--json"] + store + ["--", newKeyId], passphrase: nil)
            let object = try #require(try shown.json() as? [String: Any], "\(shown.summary)")
            #expect(object["caFile"] as? String == caFile && (object["pins"] as? [String]) == [pin], "\(object)")
            #expect(object["server"] as? String == backend.baseURL.absoluteString, "\(object)")

            let operation = try backend.dispatch(deviceId: "phone-3", channel: "png-qr-code")
            let fetched = try await sandbox.run(["fetch", "--json", "--key", newKeyId] + store)
            #expect(fetched.status == 0 && fetched.out.contains(operation.token), "\(fetched.summary)")
        }
    }
}

import DeviceSigning
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension CLISubprocessTests {
    /// `fetchchannel serve`'s TLS and JWE options, as a child process: a certificate of your own,
    /// where `--tls` tells what to trust, and the algorithms of its encrypted answers.
    @Suite struct ServeOptionsProcessTests {
        static func openssl(_ arguments: [String]) async throws -> String {
            let result = try await SystemTools.run("openssl", arguments)
            try #require(result.status == 0, "openssl \(arguments): \(result.summary)")
            return result.output
        }

        /// A self-signed P-256 certificate for 127.0.0.1 and its unencrypted key, made by openssl in
        /// the sandbox, and the pin of its key computed by openssl (SHA-256 of the DER SPKI).
        static func selfSignedCertificate(in sandbox: CLISandbox) async throws -> (cert: URL, key: URL, pin: String) {
            let cert = sandbox.file("cert.pem")
            let key = sandbox.file("key.pem")
            _ = try await openssl([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                "-subj", "/CN=fetchchannel test", "-addext", "subjectAltName=IP:127.0.0.1",
                "-keyout", key.path, "-out", cert.path,
            ])
            let publicKeyPEM = try await openssl(["x509", "-in", cert.path, "-noout", "-pubkey"])
            let publicKey = try sandbox.write("spki.pem", publicKeyPEM)
            let spki = sandbox.file("spki.der")
            let digest = sandbox.file("spki.sha256")
            _ = try await openssl(["pkey", "-pubin", "-in", publicKey.path, "-outform", "DER", "-out", spki.path])
            _ = try await openssl(["dgst", "-sha256", "-binary", "-out", digest.path, spki.path])
            let digestBytes = try Data(contentsOf: digest)
            try #require(digestBytes.count == 32)
            return (cert, key, "sha256//" + digestBytes.base64EncodedString())
        }

        /// A certificate file that cannot be read: exit 1, said in words (the file, the reason),
        /// without the library's error type ("HTTPServerError(tls-identity-failed)").
        /// A URL that cannot be written serves no one: serve stops at once and says so (exit 1),
        /// rather than run until a signal (before, it ran on and failed only when stopped).
        @Test func serveStopsWhenItsURLCannotBeWritten() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(["serve"], passphrase: nil, timeout: 20, standardOutputPath: "/dev/full")
            #expect(result.status == 1, "\(result.summary)")
            #expect(result.err.hasSuffix("Error: cannot write to standard output\n"), "\(result.summary)")
        }

        @Test func anUnreadableCertificateIsSaidInWords() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let key = try sandbox.write("key.pem", "not a key")
            let missing = sandbox.file("missing.pem").path
            let result = try await sandbox.run(
                ["serve", "--tls-cert", missing, "--tls-key", key.path], passphrase: nil)
            #expect(result.status == 1, "\(result.summary)")
            #expect(result.err.contains(missing) && !result.err.contains("HTTPServerError"), "\(result.summary)")
        }

        /// `--tls-cert` and `--tls-key`: the server presents that certificate (curl trusts it with
        /// the certificate alone), `--json` gives its pin, and there is no generated CA file.
        @Test(
            .enabled(if: SystemTools.hasOpenSSLAndCurl, "needs openssl and curl on PATH (apt-get install openssl curl)")
        )
        func servesACertificateAndKeyOfYourOwn() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let (cert, key, expectedPin) = try await Self.selfSignedCertificate(in: sandbox)
            let (child, line) = try await CLIProcess.startServe(
                ["--tls-cert", cert.path, "--tls-key", key.path, "--json"], sandbox: sandbox)
            defer { child.terminateIfRunning() }
            let parsed = try? JSONSerialization.jsonObject(with: Data(line.utf8))
            guard let object = parsed as? [String: Any], let url = object["url"] as? String else {
                let result = await child.stop()
                Issue.record("no JSON line: \(line)\n\(result.summary)")
                return
            }
            #expect(url.hasPrefix("https://127.0.0.1:"), "\(line)")
            #expect(object["caFile"] is NSNull, "no CA was generated: \(line)")
            #expect(object["pin"] as? String == expectedPin, "the pin of the certificate's key: \(line)")

            let trusted = try await SystemTools.curl(["--cacert", cert.path, url + "/_emulator/stats"])
            #expect(trusted.status == 0 && trusted.output.contains("requests"), "curl --cacert: \(trusted.summary)")
            let anotherCA = try ExternalTool.curlTrustingAnotherCA(in: sandbox.root)
            let untrusted = try await SystemTools.curl(anotherCA + [url + "/_emulator/stats"])
            #expect(untrusted.status == 60, "trusting another CA, curl refuses it: \(untrusted.summary)")

            let result = await child.stop()
            #expect(result.status == 0, "\(result.summary)")
            #expect(
                result.err.contains("TLS: trust your certificate; server key pin \(expectedPin)"), "\(result.summary)")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: sandbox.root.path)
            #expect(!leftovers.contains { $0.hasPrefix("fetchchannel-serve-") }, "no CA file: \(leftovers)")
        }

        /// `--tls` without `--json`: standard output holds the URL alone, as without TLS, and
        /// standard error says which CA file to trust and which pin the key has; both work.
        @Test(.enabled(if: SystemTools.hasCurl, "needs curl on PATH (apt-get install curl)"))
        func tlsTellsTheCAFileAndThePinOnStandardError() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let (child, url) = try await CLIProcess.startServe(["--tls"], sandbox: sandbox)
            defer { child.terminateIfRunning() }
            try await child.waitFor { $0.errorSoFar.contains("server key pin") }
            let note = child.errorSoFar
            let trust = note.split(separator: "\n").first { $0.hasPrefix("TLS: trust CA certificate ") }
            let match = trust?.wholeMatch(
                of:
                    /TLS: trust CA certificate (\/\S+) \(removed on stop\); server key pin (sha256\/\/[A-Za-z0-9+\/=]{44})/
            )
            guard let match else {
                let result = await child.stop()
                Issue.record("no trust line on standard error: \(result.summary)")
                return
            }
            let caFile = String(match.1)
            let pin = String(match.2)
            #expect(url.hasPrefix("https://127.0.0.1:") && caFile.hasPrefix(sandbox.root.path + "/"), "\(note)")

            let curl = try await SystemTools.curl(["--cacert", caFile, "--pinnedpubkey", pin, url + "/_emulator/stats"])
            #expect(curl.status == 0 && curl.output.contains("requests"), "\(curl.summary)")

            let result = await child.stop()
            #expect(result.status == 0, "\(result.summary)")
            #expect(result.lines == [url], "standard output holds the URL alone: \(result.summary)")
            #expect(!FileManager.default.fileExists(atPath: caFile), "the CA file is removed on stop")
        }

        /// `--jwe-alg` and `--jwe-enc` choose the algorithms of an encrypted operations answer, as
        /// its protected header shows, and `fetch` still decrypts it.
        @Test func jweOptionsChooseTheAlgorithmsOfEncryptedAnswers() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let (child, line) = try await CLIProcess.startServe(
                ["--json", "--jwe-alg", "ECDH-ES+A128KW", "--jwe-enc", "A128CBC-HS256"], sandbox: sandbox)
            let parsed = try? JSONSerialization.jsonObject(with: Data(line.utf8))
            guard let server = ((parsed as? [String: Any])?["url"] as? String).flatMap(URL.init(string:)) else {
                let result = await child.stop()
                Issue.record("no JSON line: \(line)\n\(result.summary)")
                return
            }
            defer { child.terminateIfRunning() }
            let session = URLSession(configuration: .ephemeral)

            // A key registered by the CLI (with its encryption key), and an operation for it.
            let keyId = try await sandbox.generateKey()
            let registered = try await sandbox.run(
                ["register", "--server", server.absoluteString, "--device-id", "phone-9", "--key", keyId]
                    + sandbox.storeArguments)
            try #require(registered.status == 0, "\(registered.summary)")
            var dispatch = URLRequest(url: server.appendingPathComponent("_emulator/dispatch"))
            dispatch.httpMethod = "POST"
            dispatch.setValue(WireMediaType.json, forHTTPHeaderField: "Content-Type")
            dispatch.httpBody = Data(#"{"deviceId":"phone-9","channel":"link"}"#.utf8)
            let (dispatched, _) = try await session.data(for: dispatch)
            let created = try JSONSerialization.jsonObject(with: dispatched) as? [String: Any]
            let token = try #require(
                ((created?["payload"] as? [String: Any])?["redeemData"] as? [String: Any])?["token"] as? String,
                "\(String(decoding: dispatched, as: UTF8.self))")

            // The raw answer, asked for as the vendor's clients ask: its header names the algorithms.
            let signed = try await sandbox.run(["sign", "--key", keyId] + sandbox.storeArguments)
            let signature = try #require(signed.lines.first, "\(signed.summary)")
            var request = URLRequest(
                url: server.appendingPathComponent("nevisfido/devices/outofbandoperations/phone-9"))
            request.setValue(signature, forHTTPHeaderField: DeviceSignatureSigner.headerName)
            request.setValue(WireMediaType.joseUTF8, forHTTPHeaderField: "Accept")
            let (body, response) = try await session.data(for: request)
            let http = try #require(response as? HTTPURLResponse)
            let compact = String(decoding: body, as: UTF8.self)
            #expect(http.statusCode == 200, "\(compact)")
            #expect(http.value(forHTTPHeaderField: "Content-Type").map(WireMediaType.isJOSE) == true)
            let header = try CompactJWE(parsing: compact).header
            #expect(header.alg.rawValue == "ECDH-ES+A128KW" && header.enc.rawValue == "A128CBC-HS256", "\(header)")

            let fetched = try await sandbox.run(["fetch", "--json"] + sandbox.storeArguments)
            #expect(fetched.status == 0 && fetched.out.contains(token), "fetch decrypts it: \(fetched.summary)")

            let result = await child.stop()
            #expect(result.status == 0, "\(result.summary)")
        }
    }
}

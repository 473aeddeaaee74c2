import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelEmulator

extension HTTPServerTests {
    /// The reference backend over TLS, checked with real handshakes by curl and openssl s_client
    /// (docs/ARCHITECTURE.md, "Transport and trust").
    @Suite(.enabled(if: TLSTestSupport.toolsAvailable, "needs curl and openssl on PATH"))
    struct ReferenceBackendTLSTests {
        @Test func curlTrustsTheGeneratedCAAndThePin() async throws {
            let backend = try ReferenceBackend.start(tls: .generated)
            defer { backend.stop() }
            let directory = try TLSTestSupport.scratchDirectory()
            defer { TLSTestSupport.remove(directory) }
            let caFile = directory.appendingPathComponent("ca.pem")
            try Data(try #require(backend.tlsCertificateAuthorityPEM).utf8).write(to: caFile)
            let pin = try #require(backend.tlsPin)
            #expect(pin.hasPrefix("sha256//") && pin.count == "sha256//".count + 44, "\(pin)")
            let url = backend.baseURL.absoluteString + "/_emulator/stats"
            #expect(url.hasPrefix("https://127.0.0.1:"))
            let anotherCA = try ExternalTool.curlTrustingAnotherCA(in: directory)

            let results = try await DedicatedThreads.run {
                [
                    try TLSTestSupport.curlStatus(url, ["--cacert", caFile.path]),
                    try TLSTestSupport.curlStatus(url, ["--cacert", caFile.path, "--pinnedpubkey", pin]),
                    try TLSTestSupport.curlStatus(
                        url.replacingOccurrences(of: "127.0.0.1", with: "localhost"),
                        ["--cacert", caFile.path]),
                    // Trusting another CA alone, and with a pin of another key, curl refuses: the
                    // trust is real.
                    try TLSTestSupport.curlStatus(url, anotherCA),
                    try TLSTestSupport.curlStatus(
                        url,
                        [
                            "--cacert", caFile.path, "--pinnedpubkey",
                            "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
                        ]),
                ]
            }
            for result in results[0..<3] {
                #expect(result.status == 0 && result.output == "200", "\(result.summary)")
            }
            #expect(results[3].status == 60, "unknown CA: \(results[3].summary)")
            #expect(results[4].status == 90, "wrong pin: \(results[4].summary)")
        }

        /// The generated certificate is valid by the real time, whatever the backend's clock says:
        /// curl checks it against the machine's clock.
        @Test func aBackendOnAManualClockStillServesAValidCertificate() async throws {
            let backend = try ReferenceBackend.start(.init(clock: ManualWallClock(millis: 0)), tls: .generated)
            defer { backend.stop() }
            let directory = try TLSTestSupport.scratchDirectory()
            defer { TLSTestSupport.remove(directory) }
            let caFile = directory.appendingPathComponent("ca.pem")
            try Data(try #require(backend.tlsCertificateAuthorityPEM).utf8).write(to: caFile)
            let url = backend.baseURL.absoluteString + "/_emulator/stats"
            let result = try await DedicatedThreads.run {
                try TLSTestSupport.curlStatus(url, ["--cacert", caFile.path])
            }
            #expect(result.status == 0 && result.output == "200", "\(result.summary)")
        }

        @Test func opensslSClientVerifiesTheChain() async throws {
            let backend = try ReferenceBackend.start(tls: .generated)
            defer { backend.stop() }
            let directory = try TLSTestSupport.scratchDirectory()
            defer { TLSTestSupport.remove(directory) }
            let caFile = directory.appendingPathComponent("ca.pem")
            try Data(try #require(backend.tlsCertificateAuthorityPEM).utf8).write(to: caFile)
            let port = try #require(backend.baseURL.port)
            let result = try await DedicatedThreads.run {
                try ExternalTool.run(
                    TLSTestSupport.openssl,
                    [
                        "s_client", "-connect", "127.0.0.1:\(port)", "-CAfile", caFile.path, "-verify_return_error",
                        "-verify_hostname", "localhost", "-servername", "localhost", "-brief",
                    ])
            }
            #expect(result.status == 0, "\(result.summary)")
            #expect(result.errors.contains("Verification: OK"), "\(result.summary)")
        }

        @Test func servesACertificateFromFiles() async throws {
            let directory = try TLSTestSupport.scratchDirectory()
            defer { TLSTestSupport.remove(directory) }
            let certificate = directory.appendingPathComponent("cert.pem").path
            let key = directory.appendingPathComponent("key.pem").path
            let made = try await DedicatedThreads.run {
                try ExternalTool.run(
                    TLSTestSupport.openssl,
                    [
                        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=IP:127.0.0.1",
                    ])
            }
            try #require(made.status == 0, "\(made.summary)")
            let backend = try ReferenceBackend.start(tls: .files(certificate: certificate, key: key))
            defer { backend.stop() }
            #expect(backend.tlsCertificateAuthorityPEM == nil)
            let pin = try #require(backend.tlsPin)
            let url = backend.baseURL.absoluteString + "/_emulator/stats"
            let result = try await DedicatedThreads.run {
                try TLSTestSupport.curlStatus(url, ["--cacert", certificate, "--pinnedpubkey", pin])
            }
            #expect(result.status == 0 && result.output == "200", "\(result.summary)")
        }

        @Test func refusesAKeyThatIsNotTheCertificates() async throws {
            let directory = try TLSTestSupport.scratchDirectory()
            defer { TLSTestSupport.remove(directory) }
            let certificate = directory.appendingPathComponent("cert.pem").path
            let otherKey = directory.appendingPathComponent("other.pem").path
            let encryptedKey = directory.appendingPathComponent("encrypted.pem").path
            let p384Key = directory.appendingPathComponent("p384.pem").path
            let made = try await DedicatedThreads.run {
                [
                    try ExternalTool.run(
                        TLSTestSupport.openssl,
                        [
                            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                            "-keyout", directory.appendingPathComponent("key.pem").path, "-out", certificate,
                            "-days", "2", "-subj", "/CN=localhost",
                        ]),
                    try ExternalTool.run(
                        TLSTestSupport.openssl,
                        [
                            "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", otherKey,
                        ]),
                    try ExternalTool.run(
                        TLSTestSupport.openssl,
                        ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", p384Key]),
                    // The certificate's own key, encrypted: refused, never a passphrase prompt.
                    try ExternalTool.run(
                        TLSTestSupport.openssl,
                        [
                            "pkey", "-in", directory.appendingPathComponent("key.pem").path, "-aes256",
                            "-passout", "pass:secret", "-out", encryptedKey,
                        ]),
                ]
            }
            try #require(made.allSatisfy { $0.status == 0 }, "\(made.map(\.summary))")
            #expect(throws: HTTPServerError(.tlsIdentityFailed)) {
                try ReferenceBackend.start(tls: .files(certificate: certificate, key: otherKey))
            }
            #expect(throws: HTTPServerError(.tlsIdentityFailed)) {
                try ReferenceBackend.start(tls: .files(certificate: certificate, key: encryptedKey))
            }
            #expect(throws: HTTPServerError(.tlsIdentityFailed)) {
                try ReferenceBackend.start(tls: .files(certificate: certificate, key: "/dev/zero"))
            }
            #expect(throws: HTTPServerError(.tlsIdentityFailed)) {
                try ReferenceBackend.start(tls: .files(certificate: otherKey, key: otherKey))
            }
            // The key is read by the package's own reader, which names what is wrong with it.
            for (key, says) in [(p384Key, "is not an ECDSA P-256 key"), (encryptedKey, "unencrypted PEM private key")] {
                do {
                    let backend = try ReferenceBackend.start(tls: .files(certificate: certificate, key: key))
                    backend.stop()
                    Issue.record("\(key) was used")
                } catch let error as HTTPServerError {
                    #expect(error.reason.contains(says) && error.reason.contains(key), "\(error)")
                }
            }
        }
    }
}

import FetchChannelBenchmarks
import FetchChannelEmulator
import FetchChannelTestSupport
import Testing

/// The light client of the `emulator-tls-handshakes` row: real full handshakes with the reference
/// backend on loopback, which must verify the chain and the name, not merely connect.
@Suite(.dedicatedThread) struct TLSHandshakeClientTests {
    @Test func handshakesWithTheBackendsCertificateAuthority() throws {
        let backend = try ReferenceBackend.start(tls: .generated)
        defer { backend.stop() }
        let client = try TLSHandshakeClient(certificateAuthorityPEM: try #require(backend.tlsCertificateAuthorityPEM))
        let port = try #require(backend.baseURL.port)
        // An IP address (checked against the IP SANs) and a name (sent as SNI, checked against the
        // DNS SANs); each handshake a new connection on the one client.
        #expect(client.handshake(port: port, host: "127.0.0.1"))
        #expect(client.handshake(port: port, host: "localhost"))
        #expect(client.handshake(port: port, host: "127.0.0.1"))
    }

    @Test func refusesAServerItsCertificateAuthorityDidNotCertify() throws {
        let backend = try ReferenceBackend.start(tls: .generated)
        defer { backend.stop() }
        let other = try ReferenceBackend.start(tls: .generated)
        defer { other.stop() }
        let client = try TLSHandshakeClient(certificateAuthorityPEM: try #require(other.tlsCertificateAuthorityPEM))
        let port = try #require(backend.baseURL.port)
        #expect(!client.handshake(port: port, host: "127.0.0.1"))
        #expect(client.handshake(port: try #require(other.baseURL.port), host: "127.0.0.1"), "its own CA still works")
    }

    @Test func refusesANameTheCertificateDoesNotCover() throws {
        let backend = try ReferenceBackend.start(tls: .generated)
        defer { backend.stop() }
        let client = try TLSHandshakeClient(certificateAuthorityPEM: try #require(backend.tlsCertificateAuthorityPEM))
        let port = try #require(backend.baseURL.port)
        #expect(!client.handshake(port: port, host: "example.com"))
        #expect(!client.handshake(port: port, host: "127.0.0.2"))
    }

    @Test func failsWithoutATLSServer() throws {
        let plain = try ReferenceBackend.start()
        defer { plain.stop() }
        let trusted = try ReferenceBackend.start(tls: .generated)
        defer { trusted.stop() }
        let client = try TLSHandshakeClient(certificateAuthorityPEM: try #require(trusted.tlsCertificateAuthorityPEM))
        #expect(!client.handshake(port: try #require(plain.baseURL.port), host: "127.0.0.1"), "plain HTTP")
        #expect(!client.handshake(port: 0, host: "127.0.0.1"))
        #expect(!client.handshake(port: 70_000, host: "127.0.0.1"))
    }

    @Test func refusesAnAuthorityWithoutACertificate() {
        #expect(throws: BenchmarkError.self) { try TLSHandshakeClient(certificateAuthorityPEM: "") }
        let notACertificate = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
        #expect(throws: BenchmarkError.self) { try TLSHandshakeClient(certificateAuthorityPEM: notACertificate) }
    }
}

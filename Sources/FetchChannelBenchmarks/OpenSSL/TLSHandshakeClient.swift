internal import CBenchmarkShim

/// The light TLS client of `emulator-tls-handshakes`: one libssl client context, its CA read
/// once, every handshake a full one on a new loopback connection (no session to resume), so the
/// row measures the emulator's handshakes rather than a client's setup (docs/ARCHITECTURE.md,
/// "Where C is, and why"). Blocking: each handshake waits on its socket, a few seconds at most.
package final class TLSHandshakeClient {
    /// `cbs_tls_client *`, owned: freed once in `deinit`.
    private let client: OpaquePointer

    /// A client that trusts the PEM certificates in `certificateAuthorityPEM`.
    package init(certificateAuthorityPEM: String) throws {
        let pem = Array(certificateAuthorityPEM.utf8)
        guard !pem.isEmpty, let client = cbs_tls_client_new(pem, pem.count) else {
            throw BenchmarkError("the handshake client cannot read a CA certificate from the PEM it was given")
        }
        self.client = client
    }

    deinit {
        cbs_tls_client_free(client)
    }

    /// One full handshake with the TLS server at 127.0.0.1:`port`, verifying its chain and `host`
    /// (a DNS name, also sent as SNI, or an IP address), then a close_notify both ways. False when
    /// anything fails: no connection, a handshake error, an untrusted chain, another name.
    package func handshake(port: Int, host: String) -> Bool {
        guard let port = Int32(exactly: port) else { return false }
        return cbs_tls_handshake(client, port, host) == 1
    }
}

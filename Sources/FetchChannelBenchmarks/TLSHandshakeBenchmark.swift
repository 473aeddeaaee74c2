import DeviceSigning
import FetchChannelEmulator
import Foundation

/// Full TLS handshakes with the reference backend on loopback, against the signing rate.
package enum TLSHandshakeBenchmark {
    /// The target ratio. A full handshake costs the backend an ECDSA signature, an ECDHE key pair
    /// and a derive, and the client two verifications (the leaf's certificate, the handshake
    /// signature) and its own ECDHE, one after the other: about 15 signatures' time, so even with
    /// nothing else the ratio stays below 0.067; 0.03 leaves as much again for TLS framing, the two
    /// close_notify and the backend's new connection and thread.
    static let target = 0.03

    /// `emulator-tls-handshakes`: handshakes/s, each a full handshake on a new connection, against
    /// P-256 signatures/s. The client is ``TLSHandshakeClient``: one libssl context with the CA
    /// read once and nothing to resume. A libcurl transport per handshake (as this row had) spends
    /// most of its time building a context and parsing the CA again, so the row measured the
    /// client's setup; the row's name says it measures the emulator. No request is sent: a request
    /// would add HTTP parsing and routing that `emulator-fetches` already measures; the
    /// connection ends with close_notify both ways, which the emulator answers as a client that
    /// leaves between requests (no error, nothing logged, the connection slot freed).
    package static func row(seconds: Double) async throws -> BenchmarkRow {
        let backend = try ReferenceBackend.start(tls: .generated)
        defer { backend.stop() }
        guard let authority = backend.tlsCertificateAuthorityPEM, let port = backend.baseURL.port,
            let host = backend.baseURL.host
        else {
            throw BenchmarkError("the TLS backend has no generated CA or no loopback address")
        }
        let client = try TLSHandshakeClient(certificateAuthorityPEM: authority)
        let key = try P256.Signing.PrivateKey()
        let message = Array("handshake baseline".utf8)
        let perRound = max(0.05, seconds / 10)
        var handshakes: [Double] = []
        var signatures: [Double] = []
        var failures = 0
        for _ in 0..<5 {
            signatures.append(
                Measurement.rate(batch: 16, minimumSeconds: perRound) {
                    for _ in 0..<16 where (try? key.signature(for: message)) == nil { failures += 1 }
                })
            handshakes.append(try handshakeRate(client, port: port, host: host, seconds: perRound))
        }
        guard failures == 0 else {
            throw BenchmarkError("\(failures) signatures failed during the handshake benchmark")
        }
        return SigningBenchmarks.ratioRow(
            "emulator-tls-handshakes", Measurement.median(handshakes), Measurement.median(signatures),
            unit: "full TLS handshakes/s, a new connection each (one client SSL_CTX, no resumption) "
                + "(baseline: P-256 signatures/s)",
            target: target)
    }

    private static func handshakeRate(
        _ client: TLSHandshakeClient, port: Int, host: String, seconds: Double
    ) throws -> Double {
        var count = 0
        let start = Measurement.monotonicSeconds()
        var elapsed = 0.0
        repeat {
            guard client.handshake(port: port, host: host) else {
                throw BenchmarkError("a TLS handshake with the reference backend on port \(port) failed")
            }
            count += 1
            elapsed = Measurement.monotonicSeconds() - start
        } while elapsed < seconds
        return Double(count) / elapsed
    }
}

import DeviceSigning
import FetchChannel
import FetchChannelEmulator
import Foundation

/// Full TLS handshakes with the reference backend on loopback, against the signing rate.
package enum TLSHandshakeBenchmark {
    /// The target ratio. A full handshake costs the backend an ECDSA signature, an ECDHE key pair
    /// and a derive, and the client two verifications (the leaf's certificate, the handshake
    /// signature) and its own ECDHE, one after the other: about 15 signatures' time, so even with
    /// nothing else the ratio stays below 0.067; 0.03 leaves as much again for TLS, HTTP, the
    /// client's new transport and the backend's new connection thread.
    static let target = 0.03

    /// `emulator-tls-handshakes`: handshakes/s, each request on a new connection of a transport of
    /// its own (no connection reuse and no session to resume), against P-256 signatures/s.
    package static func row(seconds: Double) async throws -> BenchmarkRow {
        let backend = try ReferenceBackend.start(tls: .generated)
        defer { backend.stop() }
        guard let authority = backend.tlsCertificateAuthorityPEM else {
            throw BenchmarkError("the TLS backend has no generated CA")
        }
        let trust = try TLSTrust(anchors: .pemBundle(Data(authority.utf8)))
        let request = TransportRequest(
            method: "GET", url: backend.baseURL.appendingPathComponent("handshake"),
            headers: [:], body: nil, timeout: .seconds(10), trust: trust)
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
            handshakes.append(try await handshakeRate(request, seconds: perRound))
        }
        guard failures == 0 else {
            throw BenchmarkError("\(failures) signatures failed during the handshake benchmark")
        }
        return SigningBenchmarks.ratioRow(
            "emulator-tls-handshakes", Measurement.median(handshakes), Measurement.median(signatures),
            unit: "full TLS handshakes/s, a new connection each (baseline: P-256 signatures/s)", target: target)
    }

    private static func handshakeRate(_ request: TransportRequest, seconds: Double) async throws -> Double {
        var count = 0
        let start = Measurement.monotonicSeconds()
        var elapsed = 0.0
        repeat {
            guard case .answer = await handshake(request) else {
                throw BenchmarkError("a TLS request to the reference backend got no answer")
            }
            count += 1
            elapsed = Measurement.monotonicSeconds() - start
        } while elapsed < seconds
        return Double(count) / elapsed
    }

    private static func handshake(_ request: TransportRequest) async -> TransportResult {
        #if os(Linux)
            // A transport of its own has no connection and no TLS session to reuse.
            await CurlTransport().send(request)
        #else
            .notHTTP("the handshake benchmark runs on Linux only, where the transport is libcurl")
        #endif
    }
}

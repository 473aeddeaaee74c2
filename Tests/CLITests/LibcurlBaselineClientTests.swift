import DeviceSigning
import FetchChannelBenchmarks
import FetchChannelEmulator
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

/// The C client the `fetch-client-cpu` rows divide by: it must really fetch the answer (every
/// request signed, answered 200 with the whole body), over HTTPS trusting only the backend's CA,
/// and stop at the first request that is not answered so.
@Suite(.dedicatedThread) struct LibcurlBaselineClientTests {
    /// A backend with `operations` operations pending for one dispatch target, and a signer of it.
    struct Fixture {
        let backend: ReferenceBackend
        let signer: DeviceSignatureSigner
        let deviceId = "baseline-client"
        let url: URL

        init(tls: Bool, operations: Int = 3) throws {
            backend = try ReferenceBackend.start(tls: tls ? .generated : nil)
            do {
                let key = try P256.Signing.PrivateKey()
                let target = try backend.registerDispatchTarget(deviceId: deviceId, signatureKey: key.publicKey)
                for _ in 0..<operations {
                    try backend.dispatch(deviceId: deviceId, channel: "firebase-cloud-messaging", lifetimeSeconds: 600)
                }
                signer = try DeviceSignatureSigner(key: key, dispatchTargetId: target, clock: SystemWallClock())
                url = backend.baseURL.appendingPathComponent(
                    FetchPaths.default.pendingOperationsPath(deviceId: deviceId))
            } catch {
                backend.stop()
                throw error
            }
        }

        func signatures(_ count: Int) throws -> LibcurlBaselineClient.Signatures {
            try #require(LibcurlBaselineClient.Signatures(try (0..<count).map { _ in try signer.headerValue() }))
        }

        /// The length of the answer's body as a plain HTTP/1.1 client reads it.
        func answerLength() throws -> Int {
            let client = try LoopbackHTTPClient(port: try #require(backend.baseURL.port))
            let request = LoopbackHTTPClient.operationsRequest(deviceId: deviceId, signature: try signer.headerValue())
            try #require(try client.roundTrip(request) == 200)
            return client.lastBody.count
        }
    }

    @Test func fetchesEachSignedRequestOverPlainHTTP() throws {
        let fixture = try Fixture(tls: false)
        defer { fixture.backend.stop() }
        let client = try LibcurlBaselineClient(url: fixture.url, certificateAuthorityPEM: nil)
        let (answered, bodyBytes) = client.fetch(try fixture.signatures(4))
        #expect(answered == 4)
        #expect(bodyBytes == (try fixture.answerLength()), "the whole body of three operations")
        #expect(bodyBytes > 3 * 100)
    }

    @Test func fetchesOverHTTPSTrustingOnlyTheBackendsAuthority() throws {
        let fixture = try Fixture(tls: true)
        defer { fixture.backend.stop() }
        let authority = try #require(fixture.backend.tlsCertificateAuthorityPEM)
        let client = try LibcurlBaselineClient(url: fixture.url, certificateAuthorityPEM: authority)
        #expect(client.fetch(try fixture.signatures(3)).answered == 3)

        let other = try ReferenceBackend.start(tls: .generated)
        defer { other.stop() }
        let otherAuthority = try #require(other.tlsCertificateAuthorityPEM)
        let untrusting = try LibcurlBaselineClient(url: fixture.url, certificateAuthorityPEM: otherAuthority)
        #expect(untrusting.fetch(try fixture.signatures(2)).answered == 0, "another CA's client must not connect")
    }

    /// A replayed Device-Signature is refused by the backend (401): the client stops there.
    @Test func stopsAtTheFirstRequestNotAnswered200() throws {
        let fixture = try Fixture(tls: false)
        defer { fixture.backend.stop() }
        let client = try LibcurlBaselineClient(url: fixture.url, certificateAuthorityPEM: nil)
        let signature = try fixture.signer.headerValue()
        let fresh = try fixture.signer.headerValue()
        let replayed = try #require(LibcurlBaselineClient.Signatures([signature, signature, fresh]))
        #expect(client.fetch(replayed).answered == 1)
        let unsigned = try #require(LibcurlBaselineClient.Signatures(["not-a-jws"]))
        #expect(client.fetch(unsigned) == (0, 0))
    }
}

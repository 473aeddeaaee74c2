#if os(Linux)
    import FetchChannelTestSupport
    import DeviceSigning
    import Foundation
    import Testing

    @testable import FetchChannel

    /// Real TLS handshakes on loopback: `openssl s_server` with certificates made by `openssl` in a
    /// directory of the suite's own, against the trust of each request. Skipped (saying so) when
    /// `openssl` is not on PATH.
    @Suite(
        .enabled(if: OpenSSLCommand.isAvailable, "openssl is not on PATH: the TLS handshake tests need it"),
        .dedicatedThread)
    final class CurlTransportTLSTests {
        let certificates: TestCertificates
        let transport = CurlTransport()

        init() async throws {
            certificates = try await DedicatedThreads.run { try TestCertificates.make() }
        }

        deinit {
            certificates.remove()
        }

        /// Serves `certificate` for the duration of `body`.
        func withServer<T: Sendable>(
            _ certificate: (certificate: URL, key: URL),
            _ body: (OpenSSLTestServer) async throws -> T
        ) async throws -> T {
            let directory = certificates.directory
            let server = try await DedicatedThreads.run {
                try OpenSSLTestServer(certificate: certificate.certificate, key: certificate.key, in: directory)
            }
            do {
                let result = try await body(server)
                await DedicatedThreads.run { server.stop() }
                return result
            } catch {
                await DedicatedThreads.run { server.stop() }
                throw error
            }
        }

        func get(_ url: URL, trust: TLSTrust) async -> TransportResult {
            await transport.send(
                TransportRequest(
                    method: "GET", url: url, headers: [:], body: nil, timeout: .seconds(20),
                    trust: trust))
        }

        @Test func theBackendsCATrustsItsServer() async throws {
            let caFile = try TLSTrust.caFile(certificates.caFile.path)
            let bundle = try TLSTrust(anchors: .pemBundle(try Data(contentsOf: certificates.caFile)))
            try await withServer(certificates.leaf) { server in
                for trust in [caFile, bundle] {
                    let result = await get(server.url, trust: trust)
                    #expect(result.answer?.status == 200, "\(trust): \(result)")
                }
                let byName = await get(URL(string: "https://localhost:\(server.port)/")!, trust: caFile)
                #expect(byName.answer?.status == 200, "the leaf also names localhost: \(byName)")
            }
        }

        /// As with `curl --cacert`: every certificate of a bundle is an anchor on its own, the
        /// server's own too (TLSTrust.Anchors says so); the host name is still checked.
        @Test func aServersOwnCertificateInTheBundleIsAnAnchor() async throws {
            let itself = try TLSTrust(anchors: .pemBundle(try Data(contentsOf: certificates.leaf.certificate)))
            let otherItself = try TLSTrust(
                anchors: .pemBundle(try Data(contentsOf: certificates.otherNameLeaf.certificate)))
            try await withServer(certificates.leaf) { server in
                let result = await get(server.url, trust: itself)
                #expect(result.answer?.status == 200, "\(result)")
            }
            try await withServer(certificates.otherNameLeaf) { server in
                let ownAnchor = await get(server.url, trust: otherItself)
                #expect(ownAnchor.failureKind == .tlsHostnameMismatch, "its own anchor, another name: \(ownAnchor)")
                let sibling = await get(server.url, trust: itself)
                #expect(sibling.failureKind == .tlsUntrustedCertificate, "another leaf of the CA: \(sibling)")
            }
        }

        @Test func theCAAndTheRightPinTrustTheServer() async throws {
            let trust = try TLSTrust.caFile(
                certificates.caFile.path, pins: [TLSTrustTests.goodPin, certificates.leafPin])
            try await withServer(certificates.leaf) { server in
                let result = await get(server.url, trust: trust)
                #expect(result.answer?.status == 200, "\(result)")
            }
        }

        @Test func anotherCAIsUntrusted() async throws {
            let trust = try TLSTrust.caFile(certificates.otherCAFile.path)
            try await withServer(certificates.leaf) { server in
                let result = await get(server.url, trust: trust)
                #expect(result.failureKind == .tlsUntrustedCertificate, "\(result)")
                #expect(
                    result.failureDetail?.contains(certificates.otherCAFile.path) == true, "names the CA file to check")
                let system = await get(server.url, trust: .system)
                #expect(system.failureKind == .tlsUntrustedCertificate, "a private CA is not a system CA: \(system)")
                #expect(system.failureDetail?.contains("the system CAs") == true)
            }
        }

        /// Easy handles are reused (``CurlEasyHandlePool``): a request's anchors and pins must not
        /// stay on its handle. A request trusting the system CAs after one that trusted the private
        /// CA is refused, on a new connection, not let through on the first one's trust.
        @Test func aReusedHandleKeepsNoTrustOfTheRequestBefore() async throws {
            let pinned = try TLSTrust.caFile(certificates.caFile.path, pins: [certificates.leafPin])
            try await withServer(certificates.leaf) { server in
                let trusted = await get(server.url, trust: pinned)
                #expect(trusted.answer?.status == 200, "\(trusted)")
                #expect(transport.handles.idleCount == 1, "the handle is kept for the next request")
                let system = await get(server.url, trust: .system)
                #expect(system.failureKind == .tlsUntrustedCertificate, "\(system)")
                #expect(transport.handles.idleCount == 1, "the same handle served the second request")
            }
        }

        @Test func aCertificateForAnotherNameIsAHostnameMismatch() async throws {
            let trust = try TLSTrust.caFile(certificates.caFile.path)
            try await withServer(certificates.otherNameLeaf) { server in
                let result = await get(server.url, trust: trust)
                #expect(result.failureKind == .tlsHostnameMismatch, "\(result)")
                #expect(result.failureDetail?.contains("127.0.0.1") == true, "names the host name to check")
            }
        }

        @Test func anExpiredCertificateIsExpired() async throws {
            let trust = try TLSTrust.caFile(certificates.caFile.path)
            try await withServer(certificates.expiredLeaf) { server in
                let result = await get(server.url, trust: trust)
                #expect(result.failureKind == .tlsCertificateExpired, "\(result)")
            }
        }

        @Test func aWrongPinIsAPinMismatchEvenWithATrustedChain() async throws {
            let trust = try TLSTrust.caFile(certificates.caFile.path, pins: [TLSTrustTests.goodPin])
            try await withServer(certificates.leaf) { server in
                let result = await get(server.url, trust: trust)
                #expect(result.failureKind == .tlsPinMismatch, "\(result)")
                #expect(result.failureDetail?.contains(TLSTrustTests.goodPin) == true, "names the pins to check")
            }
        }

        @Test func anUnreadableCAFileIsUntrustedAndSaysWhichFile() async throws {
            let missing = certificates.directory.appendingPathComponent("missing.pem").path
            try await withServer(certificates.leaf) { server in
                let result = await get(server.url, trust: try TLSTrust.caFile(missing))
                #expect(result.failureKind == .tlsUntrustedCertificate, "\(result)")
                #expect(result.failureDetail?.contains(missing) == true)
            }
        }

        @Test func theFetchClientUsesTheRegistrationsTrust() async throws {
            let key = try P256.Signing.PrivateKey()
            let pinned = try TLSTrust.caFile(certificates.caFile.path, pins: [TLSTrustTests.goodPin])
            try await withServer(certificates.leaf) { server in
                let registration = FetchRegistration(
                    server: server.url, deviceId: "d", dispatchTargetId: "t", key: key,
                    trust: pinned)
                let result = await FetchClient(
                    configuration: FetchClientConfiguration(), clock: SystemWallClock(),
                    estimator: ClockSkewEstimator(), transport: transport,
                    timer: ContinuousRequestTimer()
                ).pendingOutOfBandOperations([registration])
                #expect(result.errors.map(\.code) == ["networkError"])
                #expect(result.errors.first?.networkFailure?.kind == .tlsPinMismatch)
                let message = result.errors.first?.message ?? ""
                #expect(
                    message.contains(
                        "pinned keys. The public key of 127.0.0.1 matches none of the pins "
                            + TLSTrustTests.goodPin), "the message says which pins to check: \(message)")

                let redemption = RedemptionClient(
                    requestTimeout: .seconds(20), transport: transport,
                    timer: ContinuousRequestTimer())
                let redeemData = PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: server.url.absoluteString)
                let redeemed = await redemption.redeem(redeemData, trust: pinned)
                #expect(redeemed.failure?.networkFailureKind == .tlsPinMismatch, "\(redeemed)")
            }
        }
    }
#endif

#if os(Linux)
    import FetchChannelTestSupport
    import DeviceSigning
    import FetchChannelEmulator
    import Foundation
    import Testing

    @testable import FetchChannel

    /// Real failed handshakes on loopback (docs/ARCHITECTURE.md, "Transport and trust"): an
    /// `https://` request to a listener that does not speak TLS, through the libcurl transport and
    /// through the clients, fails as `networkError` of kind `tlsHandshake` with a detail that names
    /// the host and says what to check. Each test has a transport of its own; blocking waits run on a
    /// ``DedicatedThread``.
    @Suite(.dedicatedThread) struct TLSHandshakeFailureTests {
        let transport = CurlTransport()

        /// What the detail of a `tlsHandshake` failure tells a person to check.
        static let whatToCheck = "Check that the server speaks TLS 1.2 or later on this port."

        static func https(_ port: Int, _ path: String = "/") -> URL {
            URL(string: "https://127.0.0.1:\(port)\(path)")!
        }

        func get(_ url: URL) async -> TransportResult {
            await transport.send(
                TransportRequest(method: "GET", url: url, headers: [:], body: nil, timeout: .seconds(20)))
        }

        /// The detail of a `tlsHandshake` failure: the host, libcurl's own text in parentheses (not
        /// empty), and what to check.
        static func expectHandshakeDetail(_ detail: String?, sourceLocation: SourceLocation = #_sourceLocation) {
            let prefix = "No TLS connection to 127.0.0.1 ("
            let suffix = "). " + whatToCheck
            guard let detail, detail.hasPrefix(prefix), detail.hasSuffix(suffix) else {
                Issue.record(
                    "the detail names the host and says what to check: \(String(describing: detail))",
                    sourceLocation: sourceLocation)
                return
            }
            let libcurlText = detail.dropFirst(prefix.count).dropLast(suffix.count)
            #expect(!libcurlText.isEmpty, "libcurl's own text is kept: \(detail)", sourceLocation: sourceLocation)
        }

        /// The reference backend without TLS answers the ClientHello with a plain HTTP 400, which
        /// OpenSSL reads as a TLS record of the wrong version.
        @Test func httpsToAPlainHTTPListenerIsATLSHandshakeFailure() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let port = try #require(backend.baseURL.port)
            let result = await get(Self.https(port, "/_emulator/stats"))
            #expect(result.failureKind == .tlsHandshake, "\(result)")
            Self.expectHandshakeDetail(result.failureDetail)
            #expect(backend.serverStatistics.totalAccepted >= 1, "the listener was reached: not a refused connection")
        }

        /// A listener that closes each connection as soon as it accepts it: the handshake ends at
        /// the ClientHello (an EOF or a reset, whichever the client sees first).
        @Test func aListenerThatClosesBeforeTheHandshakeIsATLSHandshakeFailure() async throws {
            let closing = try RawTestServer { _ in }
            defer { closing.stop() }
            let result = await get(Self.https(closing.port))
            #expect(result.failureKind == .tlsHandshake, "\(result)")
            Self.expectHandshakeDetail(result.failureDetail)
            let accepted = await DedicatedThreads.run { closing.waitUntil { $0.accepted >= 1 } }
            #expect(accepted, "the listener accepted the connection: not a refused connection")
            #expect(closing.counters.requests == 0)
        }

        @Test func theClientsReportItAsANetworkErrorThatSaysWhatToCheck() async throws {
            let key = try P256.Signing.PrivateKey()
            let deviceId = "device-tls-handshake"
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let target = try backend.registerDispatchTarget(deviceId: deviceId, signatureKey: key.publicKey)
            let operation = try backend.dispatch(deviceId: deviceId, channel: "link")
            let port = try #require(backend.baseURL.port)
            let registration = FetchRegistration(
                server: Self.https(port), deviceId: deviceId, dispatchTargetId: target, key: key)

            let result = await FetchClient(
                configuration: FetchClientConfiguration(), clock: SystemWallClock(),
                estimator: ClockSkewEstimator(), transport: transport, timer: ContinuousRequestTimer()
            ).pendingOutOfBandOperations([registration])
            #expect(result.operations.isEmpty)
            #expect(result.errors.map(\.code) == ["networkError"])
            let error = try #require(result.errors.first)
            #expect(error.networkFailure?.kind == .tlsHandshake, "\(error)")
            #expect(error.server == "https://127.0.0.1:\(port)")
            Self.expectHandshakeDetail(error.networkFailure?.detail)
            #expect(
                error.message.hasPrefix("No secure connection to https://127.0.0.1:\(port) could be made. "),
                "the message names the server: \(error.message)")
            #expect(error.message.hasSuffix(Self.whatToCheck), "and says what to check: \(error.message)")
            #expect(backend.statistics.requests(to: .operations) == 0, "the signed request never went out in clear")

            let redemption = RedemptionClient(
                requestTimeout: .seconds(20), transport: transport, timer: ContinuousRequestTimer())
            let redeemURL = try #require(URL(string: operation.redeemURL)?.path)
            let redeemed = await redemption.redeem(
                PendingOutOfBandOperation.RedeemData(
                    token: operation.token, redeemUrl: Self.https(port, redeemURL).absoluteString),
                trust: .system)
            #expect(redeemed.failure?.networkFailureKind == .tlsHandshake, "\(redeemed)")
            #expect(backend.statistics.redemptions[operation.token] == nil, "the token was not sent")
        }
    }
#endif

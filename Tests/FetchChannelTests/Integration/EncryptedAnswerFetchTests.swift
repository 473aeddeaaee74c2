import DeviceSigning
import FetchChannelEmulator
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannel

/// Encrypted answers and what is not encrypted (docs/ARCHITECTURE.md, "Encrypted answers"): a
/// registration with an encryption key asks for exactly `application/jose;charset=UTF-8`, one
/// without for `application/json`; a backend's error answers stay JSON, so a skewed clock is
/// `clockSkewTooBig` with a measured offset as without JWE, and the same registration gets its
/// operations, decrypted, once the clocks agree. Against the reference backend on loopback (port 0,
/// stopped by each test), through the package's transport with a recorder in front of it.
@Suite(.dedicatedThread) struct EncryptedAnswerFetchTests {
    let deviceId = "device-encrypted-answer"
    let key: P256.Signing.PrivateKey
    let decryption: P256.KeyAgreement.PrivateKey

    init() throws {
        key = try P256.Signing.PrivateKey()
        decryption = try P256.KeyAgreement.PrivateKey()
    }

    /// The vendor's Accept value for an encrypted answer, spelled out so that a changed constant fails.
    static let joseAccept = "application/jose;charset=UTF-8"

    /// What one request sent as Accept, and the status and Content-Type of its answer.
    struct Exchange: Sendable {
        var accept: String?
        var status: Int?
        var contentType: String?
    }

    /// A fetch client over the package's transport that records every exchange.
    func recordingClient(policy: ClockSkewPolicy = .report) -> (FetchClient, Locked<[Exchange]>) {
        let exchanges = Locked<[Exchange]>([])
        let wire = DefaultTransport.make()
        let transport = FakeTransport { request in
            let result = await wire.send(request)
            var answer: HTTPAnswer?
            if case .answer(let received) = result { answer = received }
            let exchange = Exchange(
                accept: request.headers[WireHeader.accept], status: answer?.status,
                contentType: answer?.header(WireHeader.contentType))
            exchanges.withLock { $0.append(exchange) }
            return result
        }
        let client = FetchClient(
            configuration: FetchClientConfiguration(clockSkewPolicy: policy), clock: SystemWallClock(),
            estimator: ClockSkewEstimator(), transport: transport, timer: ContinuousRequestTimer())
        return (client, exchanges)
    }

    /// A started backend with this device's dispatch target (signature and encryption key), and
    /// the registration that holds the private halves.
    func backend(clockOffsetMillis: Int64 = 0) throws -> (ReferenceBackend, FetchRegistration) {
        let backend = try ReferenceBackend.start(.init(clockOffsetMillis: clockOffsetMillis))
        do {
            let target = try backend.registerDispatchTarget(
                deviceId: deviceId, signatureKey: key.publicKey, encryptionKey: decryption.publicKey)
            let registration = FetchRegistration(
                server: backend.baseURL, deviceId: deviceId, dispatchTargetId: target, key: key,
                encryptionKey: decryption)
            return (backend, registration)
        } catch {
            // Not returned, so no caller would stop it.
            backend.stop()
            throw error
        }
    }

    // MARK: Clock skew with encryption

    @Test(arguments: [600_000, -600_000] as [Int64])
    func aSkewedBackendIsClockSkewTooBigWithAMeasuredOffset(offsetMillis: Int64) async throws {
        let (skewed, registration) = try backend(clockOffsetMillis: offsetMillis)
        defer { skewed.stop() }
        try skewed.dispatch(deviceId: deviceId, channel: "link")
        let (client, exchanges) = recordingClient()
        let began = ContinuousClock.now
        let result = await client.pendingOutOfBandOperations([registration])
        let uncertainty = FetchAgainstReferenceBackendTests.measurementUncertaintyMillis(since: began)

        #expect(result.operations.isEmpty)
        #expect(result.errors.map(\.code) == ["clockSkewTooBig"], "\(result.errors)")
        let error = try #require(result.errors.first)
        let measured = try #require(error.measuredOffsetMillis, "the offset is measured: \(error)")
        #expect(abs(measured - offsetMillis) <= uncertainty, "measured \(measured) ms, allowed ±\(uncertainty) ms")
        #expect(error.toleranceMillis == 60_000)
        #expect(error.httpError?.status == 401)
        #expect(error.httpError?.bodyExcerpt.contains("CLOCK_SKEW_TOO_BIG") == true, "\(error)")
        #expect(error.message.contains(offsetMillis > 0 ? "behind" : "ahead of"), "\(error.message)")
        #expect(skewed.statistics.requests(to: .operations) == 1, "the .report policy does not retry")

        let recorded = exchanges.withLock { $0 }
        #expect(recorded.map(\.accept) == [Self.joseAccept], "JOSE was asked for")
        #expect(recorded.map(\.status) == [401])
        let contentType = try #require(recorded.first?.contentType)
        #expect(WireMediaType.isJSON(contentType), "the error answer stays JSON: \(contentType)")
    }

    @Test func theSameRegistrationGetsItsOperationsDecryptedOnceTheClocksAgree() async throws {
        let (backend, registration) = try backend(clockOffsetMillis: 600_000)
        defer { backend.stop() }
        let (client, exchanges) = recordingClient()
        let skewed = await client.pendingOutOfBandOperations([registration])
        #expect(skewed.errors.map(\.code) == ["clockSkewTooBig"], "\(skewed.errors)")

        backend.clockOffsetMillis = 0
        let operation = try backend.dispatch(deviceId: deviceId, channel: "png-qr-code")
        let healthy = await client.pendingOutOfBandOperations([registration])
        #expect(healthy.errors.isEmpty, "\(healthy.errors)")
        #expect(healthy.operations.map(\.token) == [operation.token])
        #expect(healthy.operations.map(\.dispatchChannel) == [.qrCode])
        #expect(healthy.operations.map(\.creationTimeInEpochMillis) == [operation.creationTimeInEpochMillis])

        let recorded = exchanges.withLock { $0 }
        #expect(recorded.map(\.accept) == [Self.joseAccept, Self.joseAccept])
        #expect(recorded.map(\.status) == [401, 200])
        let contentType = try #require(recorded.last?.contentType)
        #expect(WireMediaType.isJOSE(contentType), "the operations came encrypted and were decrypted: \(contentType)")
    }

    @Test func compensationRetriesOnceAndDecryptsTheAnswer() async throws {
        let (skewed, registration) = try backend(clockOffsetMillis: 600_000)
        defer { skewed.stop() }
        let operation = try skewed.dispatch(deviceId: deviceId, channel: "link")
        let (client, exchanges) = recordingClient(policy: .compensate(maximumOffsetMillis: 3_600_000))
        let result = await client.pendingOutOfBandOperations([registration])
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.operations.map(\.token) == [operation.token])
        #expect(skewed.statistics.requests(to: .operations) == 2, "one rejected request and one retry")

        let recorded = exchanges.withLock { $0 }
        #expect(recorded.map(\.accept) == [Self.joseAccept, Self.joseAccept], "the retry asks for JOSE too")
        #expect(recorded.map(\.status) == [401, 200])
        #expect(recorded.map { $0.contentType.map(WireMediaType.isJOSE) } == [false, true], "\(recorded)")
    }

    // MARK: The Accept field

    @Test func anEncryptionKeyAsksForJOSEAndNoKeyForJSON() async throws {
        let transport = FakeTransport { _ in .failure(NetworkFailure(.connectionRefused, detail: "recorded only")) }
        let client = FetchClient(
            configuration: FetchClientConfiguration(), clock: SystemWallClock(), estimator: ClockSkewEstimator(),
            transport: transport, timer: NeverTimer())
        let encrypted = FetchRegistration(
            server: URL(string: "https://encrypted.example")!, deviceId: deviceId, dispatchTargetId: "t", key: key,
            encryptionKey: decryption)
        let plain = FetchRegistration(
            server: URL(string: "https://plain.example")!, deviceId: deviceId, dispatchTargetId: "t", key: key)
        _ = await client.pendingOutOfBandOperations([encrypted, plain])

        func acceptFields(_ host: String) -> [[String: String]] {
            transport.requests(toHost: host).map { $0.headers.filter { $0.key.lowercased() == "accept" } }
        }
        #expect(acceptFields("encrypted.example") == [["Accept": "application/jose;charset=UTF-8"]])
        #expect(acceptFields("plain.example") == [["Accept": "application/json"]])
        #expect(WireMediaType.joseUTF8 == Self.joseAccept, "the constant is the vendor's value")
    }

    /// What libcurl puts on the wire: exactly one Accept line, the one asked for (libcurl's own
    /// `Accept: */*` is not added next to it).
    @Test func theAcceptLineOnTheWireIsExactlyTheOneAskedFor() async throws {
        let server = try RawTestServer { connection in
            while connection.readRequest() != nil {
                guard connection.write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n") else { return }
            }
        }
        defer { server.stop() }
        let base = URL(string: "http://127.0.0.1:\(server.port)")!
        let encrypted = FetchRegistration(
            server: base, deviceId: "encrypted", dispatchTargetId: "t", key: key, encryptionKey: decryption)
        let plain = FetchRegistration(server: base, deviceId: "plain", dispatchTargetId: "t", key: key)
        let result = await FetchClient().pendingOutOfBandOperations([encrypted, plain])
        #expect(result.errors.map(\.code) == ["operationNotSupportedByBackend", "operationNotSupportedByBackend"])

        let heads = server.counters.heads
        func acceptLines(ofDevice device: String) -> [[Substring]] {
            heads.filter { $0.hasPrefix("GET /nevisfido/devices/outofbandoperations/\(device) ") }
                .map { $0.split(separator: "\r\n").filter { $0.lowercased().hasPrefix("accept:") } }
        }
        #expect(acceptLines(ofDevice: "encrypted") == [["Accept: application/jose;charset=UTF-8"]], "\(heads)")
        #expect(acceptLines(ofDevice: "plain") == [["Accept: application/json"]], "\(heads)")
    }
}

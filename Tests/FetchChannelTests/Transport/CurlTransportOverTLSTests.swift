#if os(Linux)
import DeviceSigning
import FetchChannelEmulator
import Foundation
import Testing

@testable import FetchChannel

/// The transport's rules hold over TLS as over plain HTTP (docs/ARCHITECTURE.md, "Transport and
/// trust"): real handshakes on loopback with the emulator's TLS server, whose certificate comes
/// from a CA generated for each server. Each test has a transport of its own; blocking waits run
/// on a ``DedicatedThread``; bounds on time are loose (see ``CurlTransportTests/noHangBound``).
@Suite struct CurlTransportOverTLSTests {
    let transport = CurlTransport()

    /// A TLS server on 127.0.0.1 with a fresh generated identity, and the trust that accepts it
    /// (its CA and its pin). Stop it with `stop()`.
    struct TLSServer {
        let server: HTTPServer
        let url: URL
        let identity: TLSServerIdentity
        let trust: TLSTrust

        init(idleTimeout: Duration = .seconds(30),
             handler: @escaping @Sendable (HTTPRequest) -> HTTPServerAction) throws {
            identity = try TLSServerIdentity.generate()
            server = HTTPServer(configuration: .init(idleTimeout: idleTimeout, tlsIdentity: identity), handler: handler)
            url = try server.start().baseURL
            trust = try TLSTrust(anchors: .pemBundle(Data(try #require(identity.certificateAuthorityPEM).utf8)),
                                 pins: [identity.pin])
        }

        func stop() { server.stop() }
    }

    /// Counts requests and keeps their Device-Signature; `waitForRequest` blocks until one arrived.
    final class RequestLog: Sendable {
        private let signatures = Locked<[String?]>([])
        private let arrived = DispatchSemaphore(value: 0)

        func record(_ request: HTTPRequest) {
            signatures.withLock { $0.append(request.headers["Device-Signature"]) }
            arrived.signal()
        }

        var seen: [String?] { signatures.withLock { $0 } }

        func waitForRequest(timeout: Duration) -> Bool {
            arrived.wait(timeout: .now() + .seconds(Int(timeout.components.seconds))) == .success
        }
    }

    func get(_ url: URL, trust: TLSTrust, headers: [String: String] = [:],
             timeout: Duration = .seconds(20)) async -> TransportResult {
        await transport.send(TransportRequest(method: "GET", url: url, headers: headers, body: nil, timeout: timeout,
                                              trust: trust))
    }

    @Test func aRedirectOverTLSIsReturnedAndTheSignatureNeverReachesTheOtherListener() async throws {
        let elsewhereLog = RequestLog()
        let elsewhere = try TLSServer { request in
            elsewhereLog.record(request)
            return .respond(.text(status: 200, "stolen"))
        }
        defer { elsewhere.stop() }
        let redirectingLog = RequestLog()
        let target = elsewhere.url.absoluteString + "/stolen"
        let redirecting = try TLSServer { request in
            redirectingLog.record(request)
            return .respond(HTTPResponse(status: 307, headers: ["Location": target]))
        }
        defer { redirecting.stop() }

        let url = redirecting.url.appendingPathComponent("nevisfido/devices/outofbandoperations/d")
        let result = await get(url, trust: redirecting.trust, headers: ["Device-Signature": "header.payload.signature"])
        let answer = try #require(result.answer, "\(result)")
        #expect(answer.status == 307)
        #expect(answer.header("location") == target)
        #expect(redirectingLog.seen == ["header.payload.signature"], "the signature went to the URL named, over TLS")
        #expect(elsewhereLog.seen.isEmpty)
        #expect(elsewhere.server.totalAccepted == 0, "the other listener never sees a connection")
    }

    @Test func aSubSecondTimeoutFiresOverTLS() async throws {
        let server = try TLSServer { _ in .respondAfter(delayMillis: 600_000, .text(status: 200, "late")) }
        defer { server.stop() }
        let began = ContinuousClock.now
        let result = await get(server.url, trust: server.trust, timeout: .milliseconds(300))
        let elapsed = ContinuousClock.now - began
        #expect(result.failureKind == .timedOut, "\(result)")
        #expect(result.failureDetail?.contains("within 0.3 seconds") == true, "the detail names the timeout: \(result)")
        // libcurl counts whole milliseconds from the start of the transfer, handshake included.
        #expect(elapsed >= .milliseconds(298), "not before the timeout: \(elapsed)")
        #expect(elapsed < CurlTransportTests.noHangBound, "the timeout, not a later limit, ended it: \(elapsed)")
    }

    @Test func cancellingATransferOverTLSReturnsPromptly() async throws {
        let log = RequestLog()
        let server = try TLSServer { request in
            log.record(request)
            return .respondAfter(delayMillis: 600_000, .text(status: 200, "late"))
        }
        defer { server.stop() }
        let transport = self.transport
        let trust = server.trust
        let sending = Task {
            await transport.send(TransportRequest(method: "GET", url: server.url, headers: [:], body: nil,
                                                  timeout: .seconds(600), trust: trust))
        }
        let arrived = await DedicatedThread.run { log.waitForRequest(timeout: CurlTransportTests.noHangBound) }
        try #require(arrived, "the request reached the server over TLS")
        let cancelled = ContinuousClock.now
        sending.cancel()
        let result = await sending.value
        let elapsed = ContinuousClock.now - cancelled
        #expect(result.failureKind == .cancelled, "\(result)")
        #expect(elapsed < CurlTransportTests.noHangBound, "cancellation, not the 600 s timeout, ended it: \(elapsed)")
    }

    @Test func theBodyCapHoldsOverTLS() async throws {
        let cap = HTTPAnswer.maximumBodyBytes
        let server = try TLSServer { request in
            switch request.path {
            case "/announced":  // a Content-Length above the cap: stopped at the head
                return .respond(HTTPResponse(status: 200, body: [UInt8](repeating: UInt8(ascii: "a"), count: 2 * cap)))
            case "/streamed":  // no length: the body runs until the connection closes
                let head = Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n".utf8)
                return .rawBytes(head + [UInt8](repeating: UInt8(ascii: "x"), count: 2 * cap), thenClose: true)
            default:  // exactly the cap
                return .respond(HTTPResponse(status: 200, body: [UInt8](repeating: UInt8(ascii: "y"), count: cap)))
            }
        }
        defer { server.stop() }

        let announced = try #require(await get(server.url.appendingPathComponent("announced"), trust: server.trust).answer)
        #expect(announced.bodyWasCutOff && announced.body.count <= cap)
        let streamedResult = await get(server.url.appendingPathComponent("streamed"), trust: server.trust)
        let streamed = try #require(streamedResult.answer, "\(streamedResult)")
        #expect(streamed.bodyWasCutOff)
        #expect(streamed.body.count == cap && streamed.body.allSatisfy { $0 == UInt8(ascii: "x") })
        let whole = try #require(await get(server.url.appendingPathComponent("whole"), trust: server.trust).answer)
        #expect(!whole.bodyWasCutOff && whole.body.count == cap)
    }

    @Test func eightBackendsOverTLSAreFetchedAtOnceEachWithItsOwnTrust() async throws {
        // Every server holds its answer until all eight requests have arrived: a client that
        // asked them one after another would make the first wait for the others (and fail).
        let arrivals = Arrivals(expected: 8)
        var servers: [TLSServer] = []
        defer { servers.forEach { $0.stop() } }
        for _ in 0..<8 {
            let base = Locked("")
            let token = UUID().uuidString
            let server = try TLSServer { _ in
                guard arrivals.arriveAndWait() else { return .respond(.text(status: 503, "alone")) }
                let redeemUrl = base.withLock { $0 } + "/nevisfido/token/redeem/authentication"
                let body = #"{"operations":[{"creationTimeInEpochMillis":1750000000000,"#
                    + #""dispatchChannel":"link","payload":{"contentType":"application/json","version":"1","#
                    + #""redeemData":{"token":"\#(token)","redeemUrl":"\#(redeemUrl)"}}}]}"#
                return .respond(.json(status: 200, Data(body.utf8)))
            }
            base.withLock { $0 = server.url.absoluteString }
            servers.append(server)
        }
        let key = try P256.Signing.PrivateKey()
        let registrations = servers.map { server in
            FetchRegistration(server: server.url, deviceId: "d", dispatchTargetId: "t", key: key, trust: server.trust)
        }
        let client = FetchClient(configuration: FetchClientConfiguration(requestTimeout: .seconds(90)),
                                 clock: SystemWallClock(), estimator: ClockSkewEstimator(), transport: transport,
                                 timer: ContinuousRequestTimer())
        let result = await client.pendingOutOfBandOperations(registrations)
        #expect(result.errors.isEmpty, "\(result.errors.map(\.message))")
        #expect(Set(result.operations.map(\.token)).count == 8, "one operation from each backend")
    }

    // MARK: Trust and kept-alive connections

    /// A reference backend over TLS whose connections stay open between the test's requests.
    static func keptAliveBackend() throws -> ReferenceBackend {
        try ReferenceBackend.start(.init(http: .init(idleTimeout: .seconds(600))), tls: .generated)
    }

    static func statsURL(_ backend: ReferenceBackend) -> URL {
        backend.baseURL.appendingPathComponent("_emulator/stats")
    }

    static func bundleTrust(_ backend: ReferenceBackend, pins: [String] = []) throws -> TLSTrust {
        try TLSTrust(anchors: .pemBundle(Data(try #require(backend.tlsCertificateAuthorityPEM).utf8)), pins: pins)
    }

    /// `pin` with the case of one base64 letter flipped: another valid pin that differs only in case.
    static func caseFlipped(_ pin: String) throws -> String {
        var characters = Array(pin)
        let index = try #require(characters.indices.first { $0 >= TLSTrust.pinPrefix.count && $0 < 40
                                                           && characters[$0].isLetter })
        characters[index] = Character(characters[index].isUppercase ? characters[index].lowercased()
                                                                      : characters[index].uppercased())
        let flipped = String(characters)
        try #require(TLSTrust.isValidPin(flipped) && flipped != pin)
        return flipped
    }

    @Test func aKeptAliveTLSConnectionServesRequestsWithTheSameTrust() async throws {
        let backend = try Self.keptAliveBackend()
        defer { backend.stop() }
        let trust = try Self.bundleTrust(backend, pins: [try #require(backend.tlsPin)])
        for _ in 0..<3 {
            let result = await get(Self.statsURL(backend), trust: trust)
            #expect(result.answer?.status == 200, "\(result)")
        }
        #expect(backend.serverStatistics.totalAccepted == 1, "one handshake, then keep-alive")
    }

    @Test func aWrongPinFailsEvenAfterTheRightPinOnTheSameTransport() async throws {
        let backend = try Self.keptAliveBackend()
        defer { backend.stop() }
        let pin = try #require(backend.tlsPin)
        let right = try Self.bundleTrust(backend, pins: [pin])
        let wrongPins = ["sha256//" + Data(count: 32).base64EncodedString(), try Self.caseFlipped(pin)]
        for wrongPin in wrongPins {
            let first = await get(Self.statsURL(backend), trust: right)
            #expect(first.answer?.status == 200, "\(first)")
            // The connection the right pin opened is alive; a request with another pin must not ride on it.
            let wrong = await get(Self.statsURL(backend), trust: try Self.bundleTrust(backend, pins: [wrongPin]))
            #expect(wrong.failureKind == .tlsPinMismatch, "\(wrongPin): \(wrong)")
        }
        let again = await get(Self.statsURL(backend), trust: right)
        #expect(again.answer?.status == 200, "the right pin still works: \(again)")
        #expect(backend.serverStatistics.totalRequests == 3, "no request went out under a wrong pin")
    }

    @Test func aConnectionMadeWithOneCAIsNotReusedForAnother() async throws {
        let backend = try Self.keptAliveBackend()
        defer { backend.stop() }
        let other = try TLSServerIdentity.generate()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tls-reuse-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let caFile = directory.appendingPathComponent("ca.pem")
        let otherCAFile = directory.appendingPathComponent("other-ca.pem")
        try Data(try #require(backend.tlsCertificateAuthorityPEM).utf8).write(to: caFile)
        let otherPEM = Data(try #require(other.certificateAuthorityPEM).utf8)
        try otherPEM.write(to: otherCAFile)

        let trusted = [try Self.bundleTrust(backend), try TLSTrust.caFile(caFile.path)]
        let untrusted = [TLSTrust.system, try TLSTrust(anchors: .pemBundle(otherPEM)), try TLSTrust.caFile(otherCAFile.path)]
        for good in trusted {
            for bad in untrusted {
                let first = await get(Self.statsURL(backend), trust: good)
                #expect(first.answer?.status == 200, "\(good): \(first)")
                let second = await get(Self.statsURL(backend), trust: bad)
                #expect(second.failureKind == .tlsUntrustedCertificate, "\(bad) after \(good): \(second)")
            }
        }
        #expect(backend.serverStatistics.totalRequests == trusted.count * untrusted.count,
                "no request went out under an untrusting trust")
    }
}
#endif

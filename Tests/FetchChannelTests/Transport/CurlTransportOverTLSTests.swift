#if os(Linux)
    import FetchChannelTestSupport
    import DeviceSigning
    import FetchChannelEmulator
    import Foundation
    import Testing

    @testable import FetchChannel

    /// The transport's rules hold over TLS as over plain HTTP (docs/ARCHITECTURE.md, "Transport and
    /// trust"): real handshakes on loopback with the emulator's TLS server, whose certificate comes
    /// from a CA generated for each server. Each test has a transport of its own; starting and stopping
    /// servers (key generation, joining their threads) and other blocking waits run on a
    /// ``DedicatedThread``; bounds on time are loose (see ``CurlTransportTests/noHangBound``). One test
    /// at a time: each starts servers and a transport thread of its own, and all at once they took
    /// the two cores from the timing-sensitive suites running beside them.
    @Suite(.serialized, .dedicatedThread) struct CurlTransportOverTLSTests {
        let transport = CurlTransport()

        /// A TLS server on 127.0.0.1 with a fresh generated identity, and the trust that accepts it
        /// (its CA and its pin). Made and stopped by ``withTLSServers(_:handler:_:)``.
        struct TLSServer: Sendable {
            let server: HTTPServer
            let url: URL
            let identity: TLSServerIdentity
            let trust: TLSTrust

            init(
                idleTimeout: Duration = .seconds(30),
                handler: @escaping @Sendable (HTTPRequest) -> HTTPServerAction
            ) throws {
                identity = try TLSServerIdentity.generate()
                server = HTTPServer(
                    configuration: .init(idleTimeout: idleTimeout, tlsIdentity: identity), handler: handler)
                url = try server.start().baseURL
                guard let authority = identity.certificateAuthorityPEM else {
                    throw TLSFixtureError("a generated identity has no CA certificate")
                }
                trust = try TLSTrust(anchors: .pemBundle(Data(authority.utf8)), pins: [identity.pin])
            }

            func stop() { server.stop() }
        }

        /// Starts `count` servers (each with `handler`, given the server's index) on a dedicated
        /// thread, runs `body` with them, and stops them on a dedicated thread.
        func withTLSServers<T: Sendable>(
            _ count: Int = 1,
            handler: @escaping @Sendable (Int, HTTPRequest) -> HTTPServerAction,
            _ body: ([TLSServer]) async throws -> T
        ) async throws -> T {
            let servers = try await DedicatedThreads.run {
                var started: [TLSServer] = []
                do {
                    for index in 0..<count { started.append(try TLSServer { handler(index, $0) }) }
                } catch {
                    started.forEach { $0.stop() }
                    throw error
                }
                return started
            }
            do {
                let result = try await body(servers)
                await DedicatedThreads.run { servers.forEach { $0.stop() } }
                return result
            } catch {
                await DedicatedThreads.run { servers.forEach { $0.stop() } }
                throw error
            }
        }

        /// One server, as ``withTLSServers(_:handler:_:)``.
        func withTLSServer<T: Sendable>(
            handler: @escaping @Sendable (HTTPRequest) -> HTTPServerAction,
            _ body: (TLSServer) async throws -> T
        ) async throws -> T {
            try await withTLSServers(1, handler: { handler($1) }) { try await body($0[0]) }
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

        func get(
            _ url: URL, trust: TLSTrust, headers: [String: String] = [:],
            timeout: Duration = .seconds(20)
        ) async -> TransportResult {
            await transport.send(
                TransportRequest(
                    method: "GET", url: url, headers: headers, body: nil, timeout: timeout,
                    trust: trust))
        }

        @Test func aRedirectOverTLSIsReturnedAndTheSignatureNeverReachesTheOtherListener() async throws {
            let logs = [RequestLog(), RequestLog()]
            let location = Locked("")
            try await withTLSServers(
                2,
                handler: { index, request in
                    logs[index].record(request)
                    // Server 0 redirects to server 1, the other listener.
                    return index == 0
                        ? .respond(HTTPResponse(status: 307, headers: ["Location": location.withLock { $0 }]))
                        : .respond(.text(status: 200, "stolen"))
                }
            ) { servers in
                let (redirecting, elsewhere) = (servers[0], servers[1])
                let target = elsewhere.url.absoluteString + "/stolen"
                location.withLock { $0 = target }
                let url = redirecting.url.appendingPathComponent("nevisfido/devices/outofbandoperations/d")
                let result = await get(
                    url, trust: redirecting.trust,
                    headers: ["Device-Signature": "header.payload.signature"])
                let answer = try #require(result.answer, "\(result)")
                #expect(answer.status == 307)
                #expect(answer.header("location") == target)
                #expect(logs[0].seen == ["header.payload.signature"], "the signature went to the URL named, over TLS")
                #expect(logs[1].seen.isEmpty)
                #expect(elsewhere.server.totalAccepted == 0, "the other listener never sees a connection")
            }
        }

        @Test func aSubSecondTimeoutFiresOverTLS() async throws {
            try await withTLSServer(handler: { _ in .respondAfter(delayMillis: 600_000, .text(status: 200, "late")) }) {
                server in
                let began = ContinuousClock.now
                let result = await get(server.url, trust: server.trust, timeout: .milliseconds(300))
                let elapsed = ContinuousClock.now - began
                #expect(result.failureKind == .timedOut, "\(result)")
                #expect(result.failureDetail?.contains("within 0.3 seconds") == true, "names the timeout: \(result)")
                // libcurl counts whole milliseconds from the start of the transfer, handshake included.
                #expect(elapsed >= .milliseconds(298), "not before the timeout: \(elapsed)")
                #expect(
                    elapsed < CurlTransportTests.noHangBound, "the timeout, not a later limit, ended it: \(elapsed)")
            }
        }

        @Test func cancellingATransferOverTLSReturnsPromptly() async throws {
            let log = RequestLog()
            let transport = self.transport
            try await withTLSServer(handler: { request in
                log.record(request)
                return .respondAfter(delayMillis: 600_000, .text(status: 200, "late"))
            }) { server in
                let sending = Task {
                    await transport.send(
                        TransportRequest(
                            method: "GET", url: server.url, headers: [:], body: nil,
                            timeout: .seconds(600), trust: server.trust))
                }
                let arrived = await DedicatedThreads.run { log.waitForRequest(timeout: CurlTransportTests.noHangBound) }
                try #require(arrived, "the request reached the server over TLS")
                let cancelled = ContinuousClock.now
                sending.cancel()
                let result = await sending.value
                let elapsed = ContinuousClock.now - cancelled
                #expect(result.failureKind == .cancelled, "\(result)")
                #expect(
                    elapsed < CurlTransportTests.noHangBound,
                    "cancellation, not the 600 s timeout, ended it: \(elapsed)")
            }
        }

        @Test func theBodyCapHoldsOverTLS() async throws {
            let cap = HTTPAnswer.maximumBodyBytes
            try await withTLSServer(handler: { request in
                switch request.path {
                case "/announced":  // a Content-Length above the cap: stopped at the head
                    return .respond(
                        HTTPResponse(status: 200, body: [UInt8](repeating: UInt8(ascii: "a"), count: 2 * cap)))
                case "/streamed":  // no length: the body runs until the connection closes
                    let head = Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n".utf8)
                    return .rawBytes(head + [UInt8](repeating: UInt8(ascii: "x"), count: 2 * cap), thenClose: true)
                default:  // exactly the cap
                    return .respond(HTTPResponse(status: 200, body: [UInt8](repeating: UInt8(ascii: "y"), count: cap)))
                }
            }) { server in
                let announced = await get(server.url.appendingPathComponent("announced"), trust: server.trust)
                #expect(announced.answer?.bodyWasCutOff == true && (announced.answer?.body.count ?? .max) <= cap)
                let streamedResult = await get(server.url.appendingPathComponent("streamed"), trust: server.trust)
                let streamed = try #require(streamedResult.answer, "\(streamedResult)")
                #expect(streamed.bodyWasCutOff)
                #expect(streamed.body.count == cap && streamed.body.allSatisfy { $0 == UInt8(ascii: "x") })
                let whole = try #require(
                    await get(server.url.appendingPathComponent("whole"), trust: server.trust).answer)
                #expect(!whole.bodyWasCutOff && whole.body.count == cap)
            }
        }

        @Test func eightBackendsOverTLSAreFetchedAtOnceEachWithItsOwnTrust() async throws {
            // Every server holds its answer until all eight requests have arrived: a client that
            // asked them one after another would make the first wait for the others (and fail).
            let arrivals = Arrivals(expected: 8)
            let tokens = (0..<8).map { _ in UUID().uuidString }
            try await withTLSServers(
                8,
                handler: { index, request in
                    guard arrivals.arriveAndWait() else { return .respond(.text(status: 503, "alone")) }
                    let host = request.headers["Host"] ?? ""
                    let redeemUrl = "https://\(host)/nevisfido/token/redeem/authentication"
                    let body =
                        #"{"operations":[{"creationTimeInEpochMillis":1750000000000,"#
                        + #""dispatchChannel":"link","payload":{"contentType":"application/json","version":"1","#
                        + #""redeemData":{"token":"\#(tokens[index])","redeemUrl":"\#(redeemUrl)"}}}]}"#
                    return .respond(.json(status: 200, Data(body.utf8)))
                }
            ) { servers in
                let key = try P256.Signing.PrivateKey()
                let registrations = servers.map { server in
                    FetchRegistration(
                        server: server.url, deviceId: "d", dispatchTargetId: "t", key: key,
                        trust: server.trust)
                }
                let client = FetchClient(
                    configuration: FetchClientConfiguration(requestTimeout: .seconds(90)),
                    clock: SystemWallClock(), estimator: ClockSkewEstimator(), transport: transport,
                    timer: ContinuousRequestTimer())
                let result = await client.pendingOutOfBandOperations(registrations)
                #expect(result.errors.isEmpty, "\(result.errors.map(\.message))")
                #expect(Set(result.operations.map(\.token)) == Set(tokens), "one operation from each backend")
            }
        }

        // MARK: Trust and kept-alive connections

        /// Runs `body` with a reference backend over TLS whose connections stay open between the
        /// test's requests; started and stopped on a dedicated thread.
        func withKeptAliveBackend(_ body: (ReferenceBackend) async throws -> Void) async throws {
            let backend = try await DedicatedThreads.run {
                try ReferenceBackend.start(.init(http: .init(idleTimeout: .seconds(600))), tls: .generated)
            }
            do {
                try await body(backend)
            } catch {
                await DedicatedThreads.run { backend.stop() }
                throw error
            }
            await DedicatedThreads.run { backend.stop() }
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
            let index = try #require(
                characters.indices.first {
                    $0 >= TLSTrust.pinPrefix.count && $0 < 40
                        && characters[$0].isLetter
                })
            characters[index] = Character(
                characters[index].isUppercase
                    ? characters[index].lowercased()
                    : characters[index].uppercased())
            let flipped = String(characters)
            try #require(TLSTrust.isValidPin(flipped) && flipped != pin)
            return flipped
        }

        @Test func aKeptAliveTLSConnectionServesRequestsWithTheSameTrust() async throws {
            try await withKeptAliveBackend { backend in
                let trust = try Self.bundleTrust(backend, pins: [try #require(backend.tlsPin)])
                for _ in 0..<3 {
                    let result = await get(Self.statsURL(backend), trust: trust)
                    #expect(result.answer?.status == 200, "\(result)")
                }
                #expect(backend.serverStatistics.totalAccepted == 1, "one handshake, then keep-alive")
            }
        }

        @Test func aWrongPinFailsEvenAfterTheRightPinOnTheSameTransport() async throws {
            try await withKeptAliveBackend { backend in
                let pin = try #require(backend.tlsPin)
                let right = try Self.bundleTrust(backend, pins: [pin])
                let wrongPins = ["sha256//" + Data(count: 32).base64EncodedString(), try Self.caseFlipped(pin)]
                for wrongPin in wrongPins {
                    let first = await get(Self.statsURL(backend), trust: right)
                    #expect(first.answer?.status == 200, "\(first)")
                    // The connection the right pin opened is alive; a request with another pin must not ride on it.
                    let wrong = await get(
                        Self.statsURL(backend), trust: try Self.bundleTrust(backend, pins: [wrongPin]))
                    #expect(wrong.failureKind == .tlsPinMismatch, "\(wrongPin): \(wrong)")
                }
                let again = await get(Self.statsURL(backend), trust: right)
                #expect(again.answer?.status == 200, "the right pin still works: \(again)")
                #expect(backend.serverStatistics.totalRequests == 3, "no request went out under a wrong pin")
            }
        }

        /// A CA file is read again for each new connection: libcurl's cache of the store built from
        /// a path (a day by default) would keep trusting a CA after it was removed from the file.
        @Test func aCAFileIsReadAgainForEachNewConnection() async throws {
            try await withTLSServers(2, handler: { _, _ in .respond(.text(status: 200, "ok")) }) { servers in
                let directory = FileManager.default.temporaryDirectory
                    .appendingPathComponent("tls-cafile-\(UUID().uuidString)", isDirectory: true)
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
                defer { try? FileManager.default.removeItem(at: directory) }
                let caFile = directory.appendingPathComponent("ca.pem")
                let trust = try TLSTrust.caFile(caFile.path)
                for server in servers {
                    // The file now names only this server's CA; the connection to it is a new one.
                    try Data(try #require(server.identity.certificateAuthorityPEM).utf8).write(to: caFile)
                    let result = await get(server.url, trust: trust)
                    #expect(result.answer?.status == 200, "\(server.url): \(result)")
                }
                // And the first server's CA is no longer trusted for a new connection to it.
                let fresh = CurlTransport()
                let first = await fresh.send(
                    TransportRequest(
                        method: "GET", url: servers[0].url, headers: [:], body: nil,
                        timeout: .seconds(20), trust: trust))
                #expect(first.failureKind == .tlsUntrustedCertificate, "\(first)")
            }
        }

        /// A CA file that became a FIFO (no writer) or a directory fails its request at once as
        /// `tlsUntrustedCertificate`; before, libcurl opened a FIFO with a blocking open(2) on the
        /// transport's thread, and that request, and every other, waited for ever.
        @Test func aCAFileThatIsNotARegularFileFailsWithoutBlocking() async throws {
            try await withTLSServers(1, handler: { _, _ in .respond(.text(status: 200, "ok")) }) { servers in
                let directory = FileManager.default.temporaryDirectory
                    .appendingPathComponent("tls-cafifo-\(UUID().uuidString)", isDirectory: true)
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
                defer { try? FileManager.default.removeItem(at: directory) }
                let fifo = directory.appendingPathComponent("ca.pem")
                try #require(mkfifo(fifo.path, 0o600) == 0)
                let subdirectory = directory.appendingPathComponent("ca-directory.pem")
                try FileManager.default.createDirectory(at: subdirectory, withIntermediateDirectories: false)
                let transport = CurlTransport()
                for path in [fifo.path, subdirectory.path] {
                    let request = TransportRequest(
                        method: "GET", url: servers[0].url, headers: [:], body: nil, timeout: .seconds(20),
                        trust: try TLSTrust.caFile(path))
                    // The hang guard is a thread of its own: a blocked open(2) holds the thread
                    // this test's tasks run on, and the Dispatch threads wait for its lock.
                    let state = Locked((finished: false, unblocked: false))
                    let finished = DispatchSemaphore(value: 0)
                    Thread {
                        guard finished.wait(timeout: .now() + 10 * Double(LooseTimeBounds.scale)) == .timedOut,
                            state.withLock({
                                $0.unblocked = !$0.finished
                                return $0.unblocked
                            })
                        else { return }
                        // A writer that comes and goes ends a blocked open(2) and read(2) of the
                        // FIFO; OpenSSL opens the file more than once.
                        repeat {
                            let writer = open(fifo.path, O_WRONLY | O_NONBLOCK)
                            if writer >= 0 { close(writer) }
                        } while finished.wait(timeout: .now() + 0.1) == .timedOut
                    }.start()
                    let result: TransportResult? = await transport.send(request)
                    let blocked = state.withLock {
                        $0.finished = true
                        return $0.unblocked
                    }
                    finished.signal()
                    #expect(!blocked, "\(path): the request blocked until the FIFO got a writer")
                    #expect(
                        result?.failureKind == .tlsUntrustedCertificate,
                        "\(path): blocked or \(String(describing: result))")
                    #expect(result?.failureDetail?.contains(path) == true, "\(String(describing: result))")
                }
                // The transport still works.
                let caFile = directory.appendingPathComponent("real-ca.pem")
                try Data(try #require(servers[0].identity.certificateAuthorityPEM).utf8).write(to: caFile)
                let fine = await transport.send(
                    TransportRequest(
                        method: "GET", url: servers[0].url, headers: [:], body: nil, timeout: .seconds(20),
                        trust: try TLSTrust.caFile(caFile.path)))
                #expect(fine.answer?.status == 200, "\(fine)")
            }
        }

        /// A CA file over 1 MiB (the bundle's limit) is refused before libcurl sees it: OpenSSL
        /// parses it at every new connection under the transport's lock, and at the former 4 MiB
        /// every other transfer waited about half a second. The CA, padded to just under the
        /// limit with comment lines (OpenSSL skips text between PEM blocks), still serves.
        @Test func aCAFileOverTheBundleLimitIsRefused() async throws {
            try await withTLSServers(1, handler: { _, _ in .respond(.text(status: 200, "ok")) }) { servers in
                let directory = FileManager.default.temporaryDirectory
                    .appendingPathComponent("tls-cabig-\(UUID().uuidString)", isDirectory: true)
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
                defer { try? FileManager.default.removeItem(at: directory) }
                let authority = Data(try #require(servers[0].identity.certificateAuthorityPEM).utf8)
                let limit = TLSTrust.maximumBundleBytes
                func send(padding: Int) async throws -> TransportResult {
                    let file = directory.appendingPathComponent("ca-\(padding).pem")
                    let line = Data((String(repeating: "#", count: 99) + "\n").utf8)
                    var contents = Data(repeating: 0, count: 0)
                    for _ in 0..<(padding / line.count) { contents.append(line) }
                    contents.append(Data(repeating: UInt8(ascii: "\n"), count: padding % line.count))
                    try (contents + authority).write(to: file)
                    return await transport.send(
                        TransportRequest(
                            method: "GET", url: servers[0].url, headers: [:], body: nil, timeout: .seconds(20),
                            trust: try TLSTrust.caFile(file.path)))
                }
                let over = try await send(padding: limit - authority.count + 1)
                #expect(over.failureKind == .tlsUntrustedCertificate, "\(over)")
                #expect(over.failureDetail?.contains("larger than 1 MiB") == true, "\(over)")
                let within = try await send(padding: limit - authority.count)
                #expect(within.answer?.status == 200, "\(within)")
            }
        }

        @Test func aConnectionMadeWithOneCAIsNotReusedForAnother() async throws {
            try await withKeptAliveBackend { backend in
                let other = try await DedicatedThreads.run { try TLSServerIdentity.generate() }
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
                let untrusted = [
                    TLSTrust.system, try TLSTrust(anchors: .pemBundle(otherPEM)),
                    try TLSTrust.caFile(otherCAFile.path),
                ]
                for good in trusted {
                    for bad in untrusted {
                        let first = await get(Self.statsURL(backend), trust: good)
                        #expect(first.answer?.status == 200, "\(good): \(first)")
                        let second = await get(Self.statsURL(backend), trust: bad)
                        #expect(second.failureKind == .tlsUntrustedCertificate, "\(bad) after \(good): \(second)")
                    }
                }
                #expect(
                    backend.serverStatistics.totalRequests == trusted.count * untrusted.count,
                    "no request went out under an untrusting trust")
            }
        }
    }
#endif

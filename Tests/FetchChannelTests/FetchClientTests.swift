import DeviceSigning
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannel

/// The fetch client over a fake transport: concurrency, timeouts, cancellation, clock-skew policy,
/// fresh signatures, the transport rule. No sleeps: timers and answers are driven by the test.
@Suite(.dedicatedThread) struct FetchClientTests {
    /// A whole second, so that `Date` (whole seconds) carries the server time exactly.
    static let deviceMillis: Int64 = 1_700_000_000_000

    let key: P256.Signing.PrivateKey
    let clock = ManualWallClock(millis: FetchClientTests.deviceMillis)

    init() throws {
        key = try P256.Signing.PrivateKey()
    }

    func registration(_ base: String, deviceId: String = "device-1", target: String = "target-1") -> FetchRegistration {
        FetchRegistration(server: URL(string: base)!, deviceId: deviceId, dispatchTargetId: target, key: key)
    }

    func client(
        _ transport: FakeTransport, policy: ClockSkewPolicy = .report, timer: any RequestTimer = NeverTimer(),
        estimator: ClockSkewEstimator = ClockSkewEstimator()
    ) -> FetchClient {
        FetchClient(
            configuration: FetchClientConfiguration(clockSkewPolicy: policy), clock: clock, estimator: estimator,
            transport: transport, timer: timer)
    }

    static func ok(_ operations: [String]) -> TransportResult {
        .answer(
            HTTPAnswer(
                status: 200, headers: ["Content-Type": "application/json"],
                body: Data(#"{"operations":[\#(operations.joined(separator: ","))]}"#.utf8)))
    }

    // MARK: Concurrency and merging

    @Test func resultsDoNotDependOnCompletionOrder() async throws {
        func run(releaseOrder: [String]) async -> (PendingOutOfBandOperationsResult, Int) {
            let gate = Gate()
            let transport = FakeTransport { request in
                let host = request.url.host ?? ""
                guard await gate.park(host) else { return .failure(NetworkFailure(.cancelled, detail: "")) }
                switch host {
                case "a.example":
                    return Self.ok([
                        FakeBackend.operation(30, "link", "a3", server: "https://a.example"),
                        FakeBackend.operation(10, "png-qr-code", "a1", server: "https://a.example"),
                    ])
                case "b.example":
                    return Self.ok([
                        FakeBackend.operation(
                            20, "firebase-cloud-messaging", "b2",
                            server: "https://b.example"),
                        FakeBackend.operation(10, "link", "a1", server: "https://b.example"),
                    ])
                case "c.example": return .answer(HTTPAnswer(status: 503, body: Data("busy".utf8)))
                default: return .answer(HTTPAnswer(status: 404))
                }
            }
            let fetch = Task {
                await client(transport).pendingOutOfBandOperations(
                    ["https://a.example", "https://b.example", "https://c.example", "https://d.example"].map {
                        registration($0)
                    })
            }
            // All four requests are in flight before any is answered: the fetch is concurrent.
            await gate.waitForArrivals(4)
            let inFlight = gate.arrivals
            for host in releaseOrder { gate.release(host) }
            return (await fetch.value, inFlight)
        }
        let (forward, inFlight) = await run(releaseOrder: ["a.example", "b.example", "c.example", "d.example"])
        let (backward, _) = await run(releaseOrder: ["d.example", "c.example", "b.example", "a.example"])
        #expect(inFlight == 4)
        #expect(forward == backward)
        // a1 appears on both backends at time 10: two operations (one per origin), by server name.
        #expect(forward.operations.map(\.token) == ["a1", "a1", "b2", "a3"])
        #expect(forward.operations.prefix(2).map(\.server) == ["https://a.example", "https://b.example"])
        #expect(forward.errors.map(\.code) == ["serverError", "operationNotSupportedByBackend"])
        #expect(forward.errors.map(\.server) == ["https://c.example", "https://d.example"])
    }

    @Test func noRegistrationsIsAnEmptyResult() async {
        let transport = FakeTransport { _ in Self.ok([]) }
        let result = await client(transport).pendingOutOfBandOperations([])
        #expect(result == PendingOutOfBandOperationsResult(operations: [], errors: []))
        #expect(transport.requests.isEmpty)
    }

    // MARK: Timeout and cancellation

    @Test func timeoutIsANetworkErrorAndCancelsTheRequest() async throws {
        let gate = Gate()
        let cancelled = Locked(0)
        let transport = FakeTransport { _ in
            if await gate.park("hang") { return Self.ok([]) }
            cancelled.withLock { $0 += 1 }
            return .failure(NetworkFailure(.cancelled, detail: ""))
        }
        let result = await client(transport, timer: ImmediateTimer()).pendingOutOfBandOperations([
            registration("https://slow.example")
        ])
        let error = try #require(result.errors.first)
        #expect(result.errors.count == 1)
        #expect(error.networkFailure?.kind == .timedOut)
        #expect(error.server == "https://slow.example")
        #expect(cancelled.withLock { $0 } == 1, "the timed-out request is cancelled, not left running")
    }

    /// A timeout longer than a day is waited for as a day, as the configuration says: waited for
    /// as it is, `Task.sleep` could overflow the clock's instant and trap.
    @Test func aTimeoutOverADayIsRacedAsADay() async throws {
        let asked = Locked<[Duration]>([])
        struct RecordingTimer: RequestTimer {
            let asked: Locked<[Duration]>
            func sleep(for duration: Duration) async throws {
                asked.withLock { $0.append(duration) }
            }
        }
        let transport = FakeTransport { _ in .failure(NetworkFailure(.cancelled, detail: "")) }
        let client = FetchClient(
            configuration: FetchClientConfiguration(requestTimeout: .seconds(Int64.max)), clock: clock,
            estimator: ClockSkewEstimator(), transport: transport, timer: RecordingTimer(asked: asked))
        _ = await client.pendingOutOfBandOperations([registration("https://slow.example")])
        #expect(asked.withLock { $0 } == [.seconds(86_400)])
    }

    @Test func cancellationEndsTheFetchAndKeepsWhatArrived() async throws {
        let gate = Gate()
        let transport = FakeTransport { request in
            if request.url.host == "fast.example" {
                gate.arrive()
                return Self.ok([FakeBackend.operation(1, "link", "t1", server: "https://fast.example")])
            }
            if await gate.park("hang") { return Self.ok([]) }
            return .failure(NetworkFailure(.cancelled, detail: "cancelled"))
        }
        let fetchClient = client(transport)
        let fetch = Task {
            await fetchClient.pendingOutOfBandOperations(
                [
                    registration("https://fast.example"), registration("https://hang1.example"),
                    registration("https://hang2.example"),
                ])
        }
        // All three requests reached the transport (the fast one is answered as it arrives): a
        // transport that has answered is never overruled by the cancellation that follows.
        await gate.waitForArrivals(3)
        fetch.cancel()
        let result = await fetch.value
        #expect(result.operations.map(\.token) == ["t1"])
        #expect(result.errors.map { $0.networkFailure?.kind } == [.cancelled, .cancelled])
        #expect(result.errors.map(\.server) == ["https://hang1.example", "https://hang2.example"])
        #expect(transport.requests.count == 3)
    }

    @Test func aCancelledTaskSendsNothing() async {
        let transport = FakeTransport { _ in Self.ok([]) }
        let fetchClient = client(transport)
        let fetch = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await fetchClient.pendingOutOfBandOperations([registration("https://a.example")])
        }
        let result = await fetch.value
        #expect(result.errors.map { $0.networkFailure?.kind } == [.cancelled])
        #expect(transport.requests.isEmpty)
    }

    // MARK: Clock skew

    /// A backend whose clock is `skewMillis` ahead of the device's.
    func skewedBackend(_ skewMillis: Int64, base: String = "https://skewed.example") throws -> FakeBackend {
        try FakeBackend(
            base: base, key: key.publicKey, dispatchTargetId: "target-1", serverMillis: Self.deviceMillis + skewMillis,
            operations: [FakeBackend.operation(5, "link", "skewed-op", server: base)])
    }

    @Test func reportDoesNotRetryAndReportsTheMeasuredOffset() async throws {
        let backend = try skewedBackend(600_000)
        let transport = FakeTransport { backend.answer($0) }
        let result = await client(transport, policy: .report).pendingOutOfBandOperations([registration(backend.base)])
        #expect(transport.requests.count == 1)
        let error = try #require(result.errors.first)
        #expect(error.code == "clockSkewTooBig")
        // Definite: serverTimeInEpochMillis − creation time = 600000 exactly (the clocks stand still).
        #expect(error.measuredOffsetMillis == 600_000)
        #expect(error.toleranceMillis == 60_000)
        #expect(error.httpError?.status == 401)
        #expect(
            error.message
                == ClockSkew(server: backend.base, measuredOffsetMillis: 600_000, toleranceMillis: 60_000).message)
        #expect(error.message.contains("10 min behind"))
    }

    @Test func compensateRetriesOnceWithANewRequestAtTheNewOffset() async throws {
        let backend = try skewedBackend(600_000)
        let transport = FakeTransport { backend.answer($0) }
        let policy = ClockSkewPolicy.compensate(maximumOffsetMillis: 3_600_000)
        let result = await client(transport, policy: policy).pendingOutOfBandOperations([registration(backend.base)])
        #expect(result.errors.isEmpty)
        #expect(result.operations.map(\.token) == ["skewed-op"])
        let signatures = transport.requests.compactMap { $0.headers[DeviceSignatureSigner.headerName] }
        #expect(signatures.count == 2)
        let payloads = try signatures.map(Self.payload)
        #expect(payloads[0].requestId != payloads[1].requestId)
        #expect(payloads[0].creationTimeInEpochMillis == Self.deviceMillis)
        // Date (whole second, server time) + 500 − midpoint (the device clock stood still): 600500.
        #expect(payloads[1].creationTimeInEpochMillis == Self.deviceMillis + 600_500)
    }

    @Test func compensateNeverRetriesTwice() async throws {
        // A backend whose clock jumps another 10 minutes at every request: the retry fails too.
        let backend = try skewedBackend(600_000)
        let transport = FakeTransport { request in
            defer { backend.serverClock.advance(byMillis: 600_000) }
            return backend.answer(request)
        }
        let policy = ClockSkewPolicy.compensate(maximumOffsetMillis: 3_600_000)
        let result = await client(transport, policy: policy).pendingOutOfBandOperations([registration(backend.base)])
        #expect(transport.requests.count == 2)
        #expect(result.errors.map(\.code) == ["clockSkewTooBig"])
    }

    @Test func compensateDoesNotRetryBeyondItsMaximum() async throws {
        let backend = try skewedBackend(600_000)
        let transport = FakeTransport { backend.answer($0) }
        let policy = ClockSkewPolicy.compensate(maximumOffsetMillis: 300_000)
        let result = await client(transport, policy: policy).pendingOutOfBandOperations([registration(backend.base)])
        #expect(transport.requests.count == 1)
        #expect(result.errors.map(\.code) == ["clockSkewTooBig"])
    }

    @Test func compensateSignsTheNextFetchWithTheKnownOffset() async throws {
        let backend = try skewedBackend(-120_000)
        let transport = FakeTransport { backend.answer($0) }
        let fetchClient = client(transport, policy: .compensate(maximumOffsetMillis: 3_600_000))
        let first = await fetchClient.pendingOutOfBandOperations([registration(backend.base)])
        let second = await fetchClient.pendingOutOfBandOperations([registration(backend.base)])
        #expect(first.errors.isEmpty && second.errors.isEmpty)
        #expect(transport.requests.count == 3, "two for the first fetch, one for the second")
        let last = try Self.payload(try #require(transport.requests.last?.headers[DeviceSignatureSigner.headerName]))
        #expect(last.creationTimeInEpochMillis == Self.deviceMillis - 120_000 + 500)
    }

    /// The device clock was set right after the estimate learnt it was 10 minutes behind: the
    /// next fetch, signed with the stale estimate, is refused for its time, and the backend's own
    /// measurement (not the estimate, whose samples still say 10 minutes) signs the retry. The
    /// stale samples go, so the fetch after that is signed without an offset, in one request.
    @Test func aStaleEstimateGivesWayToTheBackendsMeasurement() async throws {
        let backend = try skewedBackend(600_000)
        let transport = FakeTransport { backend.answer($0) }
        let fetchClient = client(transport, policy: .compensate(maximumOffsetMillis: 3_600_000))
        let learnt = await fetchClient.pendingOutOfBandOperations([registration(backend.base)])
        #expect(learnt.errors.isEmpty && transport.requests.count == 2, "\(learnt.errors)")

        backend.serverClock.advance(byMillis: -600_000)  // the device clock is right now
        let corrected = await fetchClient.pendingOutOfBandOperations([registration(backend.base)])
        #expect(corrected.errors.isEmpty, "\(corrected.errors)")
        #expect(transport.requests.count == 4)
        let next = await fetchClient.pendingOutOfBandOperations([registration(backend.base)])
        #expect(next.errors.isEmpty && transport.requests.count == 5, "\(next.errors)")
        let last = try Self.payload(try #require(transport.requests.last?.headers[DeviceSignatureSigner.headerName]))
        #expect(abs(last.creationTimeInEpochMillis - Self.deviceMillis) <= 1_000, "signed about without an offset")
    }

    /// One refusal from a node whose clock is off (its measurement 30 minutes ahead) makes a retry
    /// signed with that measurement; refused in turn, it takes nothing from the estimate: the
    /// samples are forgotten only once a retry signed with a measurement is accepted.
    @Test func aRefusedMeasurementLeavesTheEstimateAlone() async throws {
        let base = "https://a.example"
        let estimator = ClockSkewEstimator()
        for _ in 0..<5 { estimator.record(ClockSkewSample(offsetMillis: 0), for: base) }
        @Sendable func skewAnswer(serverMillis: Int64) -> TransportResult {
            let body = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","serverTimeInEpochMillis":\#(serverMillis)}"#
            return .answer(
                HTTPAnswer(status: 401, headers: ["Content-Type": "application/json"], body: Data(body.utf8)))
        }
        // The first answer comes from the node that is off, the retry's from one that is right;
        // neither has a Date, so neither adds a sample.
        let answers = Locked([skewAnswer(serverMillis: Self.deviceMillis + 1_800_000)])
        let offNode = FakeTransport { _ in
            answers.withLock { $0.isEmpty ? nil : $0.removeFirst() } ?? skewAnswer(serverMillis: Self.deviceMillis)
        }
        let result = await client(offNode, policy: .compensate(maximumOffsetMillis: 3_600_000), estimator: estimator)
            .pendingOutOfBandOperations([registration(base)])
        #expect(result.errors.map(\.code) == ["clockSkewTooBig"])
        #expect(offNode.requests.count == 2, "retried once, with the node's measurement")
        #expect(estimator.estimatedOffsetMillis(for: base) == 0, "the five samples are kept")
    }

    /// A fetch with five good samples (offset 0) of `https://a.example`, whose first request is
    /// refused by a node 30 minutes off, and whose retry (signed with that measurement) gets
    /// `retryAnswer`: the fetch's result, the requests sent and the estimate after it.
    func retryAfterAnOffNodesRefusal(
        answeredWith retryAnswer: HTTPAnswer
    ) async -> (result: PendingOutOfBandOperationsResult, requests: Int, estimate: Int64?) {
        let base = "https://a.example"
        let estimator = ClockSkewEstimator()
        for _ in 0..<5 { estimator.record(ClockSkewSample(offsetMillis: 0), for: base) }
        let skew = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","serverTimeInEpochMillis":\#(Self.deviceMillis + 1_800_000)}"#
        let answers = Locked([
            TransportResult.answer(
                HTTPAnswer(status: 401, headers: ["Content-Type": "application/json"], body: Data(skew.utf8))),
            .answer(retryAnswer),
        ])
        let transport = FakeTransport { _ in
            answers.withLock { $0.isEmpty ? nil : $0.removeFirst() } ?? .answer(retryAnswer)
        }
        let result = await client(transport, policy: .compensate(maximumOffsetMillis: 3_600_000), estimator: estimator)
            .pendingOutOfBandOperations([registration(base)])
        return (result, transport.requests.count, estimator.estimatedOffsetMillis(for: base))
    }

    /// The retry signed with the backend's measurement is answered, but not accepted: a 503 from
    /// a proxy whose own clock is 20 minutes off. Its Date is one sample among the others; the
    /// five good samples are not forgotten for it (they used to be: any answer that was not about
    /// skew counted as accepted).
    @Test func anUnacceptedRetryLeavesTheEstimateAlone() async throws {
        let proxy = HTTPAnswer(
            status: 503, headers: ["Date": HTTPDate.format(millis: Self.deviceMillis + 1_200_000)], body: Data())
        let (result, requests, estimate) = await retryAfterAnOffNodesRefusal(answeredWith: proxy)
        #expect(requests == 2, "retried once, with the node's measurement")
        #expect(result.errors.map(\.code) != ["clockSkewTooBig"], "\(result.errors)")
        #expect(estimate == 0, "the good samples outvote the proxy's")
    }

    /// The retry signed with the backend's measurement is answered 200, but with a body that is
    /// not an answer (from something in between with a clock of its own): nothing of it is used,
    /// so it does not wipe the good samples either.
    @Test func aRetryAnsweredWithAnUnusableBodyLeavesTheEstimateAlone() async throws {
        let unusable = HTTPAnswer(
            status: 200,
            headers: [
                "Content-Type": "application/json", "Date": HTTPDate.format(millis: Self.deviceMillis + 1_200_000),
            ],
            body: Data("<html>maintenance</html>".utf8))
        let (result, requests, estimate) = await retryAfterAnOffNodesRefusal(answeredWith: unusable)
        #expect(requests == 2, "retried once, with the node's measurement")
        #expect(result.errors.map(\.code) == ["invalidResponse"], "\(result.errors)")
        #expect(estimate == 0, "the good samples outvote the one in between")
    }

    /// A request already signed with the estimate is not off by it: a 401 that still comes back
    /// (here the backend knows another key) is `unauthorized`, not a clock to fix.
    @Test func aCompensatedRequestsRefusalIsNotBlamedOnTheClock() async throws {
        let other = try P256.Signing.PrivateKey()
        let backend = try FakeBackend(
            base: "https://a.example", key: other.publicKey, dispatchTargetId: "target-1",
            serverMillis: Self.deviceMillis + 180_000)
        let transport = FakeTransport { backend.answer($0) }
        let fetchClient = client(transport, policy: .compensate(maximumOffsetMillis: 3_600_000))
        // The first request is off by 3 min (definite skew) and is retried compensated; the retry
        // and the next fetch (compensated from the start) are refused for the key.
        let first = await fetchClient.pendingOutOfBandOperations([registration(backend.base)])
        #expect(transport.requests.count == 2)
        #expect(first.errors.map(\.code) == ["unauthorized"], "\(first.errors)")
        let second = await fetchClient.pendingOutOfBandOperations([registration(backend.base)])
        #expect(transport.requests.count == 3)
        #expect(second.errors.map(\.code) == ["unauthorized"], "\(second.errors)")
    }

    @Test func unauthorizedWithoutSkewIsNotRetried() async throws {
        let other = try P256.Signing.PrivateKey()
        let backend = try FakeBackend(
            base: "https://a.example", key: other.publicKey, dispatchTargetId: "target-1",
            serverMillis: Self.deviceMillis)
        let transport = FakeTransport { backend.answer($0) }
        let result = await client(transport, policy: .compensate(maximumOffsetMillis: 3_600_000))
            .pendingOutOfBandOperations([registration(backend.base)])
        #expect(transport.requests.count == 1)
        #expect(result.errors.map(\.code) == ["unauthorized"])
    }

    @Test func everyAnswerDateIsASample() async throws {
        let estimator = ClockSkewEstimator()
        let date = HTTPDate.format(millis: Self.deviceMillis + 90_000)
        let transport = FakeTransport { _ in .answer(HTTPAnswer(status: 404, headers: ["Date": date])) }
        let result = await client(transport, estimator: estimator).pendingOutOfBandOperations([
            registration("https://a.example/")
        ])
        #expect(result.errors.map(\.code) == ["operationNotSupportedByBackend"])
        #expect(estimator.estimatedOffsetMillis(for: "https://a.example") == 90_500)
    }

    // MARK: Signatures

    @Test func everyRequestHasAFreshValidSignature() async throws {
        let backends = try ["https://a.example", "https://b.example", "https://c.example"].map {
            try FakeBackend(base: $0, key: key.publicKey, dispatchTargetId: "target-1", serverMillis: Self.deviceMillis)
        }
        let transport = FakeTransport { request in
            backends.first { $0.base.hasSuffix(request.url.host ?? "-") }!.answer(request)
        }
        let fetchClient = client(transport)
        let registrations = backends.map { registration($0.base) }
        for _ in 0..<3 {
            let result = await fetchClient.pendingOutOfBandOperations(registrations)
            // The backends' verifiers reject any replayed request id: all nine are accepted.
            #expect(result.errors.isEmpty, "\(result.errors)")
        }
        let requests = transport.requests
        #expect(requests.count == 9)
        let signatures = requests.compactMap { $0.headers[DeviceSignatureSigner.headerName] }
        #expect(Set(signatures).count == 9)
        #expect(Set(try signatures.map { try Self.payload($0).requestId }).count == 9)
        #expect(requests.allSatisfy { $0.headers["Accept"] == "application/json" && $0.method == "GET" })
        #expect(requests.allSatisfy { $0.url.path == "/nevisfido/devices/outofbandoperations/device-1" })
    }

    struct Payload: Decodable {
        var dispatchTargetId: String
        var requestId: String
        var creationTimeInEpochMillis: Int64
    }

    static func payload(_ compact: String) throws -> Payload {
        let part = try #require(compact.split(separator: ".").dropFirst().first)
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let data = try #require(Data(base64Encoded: base64))
        return try JSONDecoder().decode(Payload.self, from: data)
    }

    // MARK: Transport rule and keys

    @Test func plainHTTPToANonLoopbackHostIsRefusedWithoutARequest() async throws {
        let transport = FakeTransport { _ in Self.ok([]) }
        let refused = [
            "http://backend.example", "http://10.0.0.1:8080", "http://127.0.0.1.nip.io", "http://[::2]:80",
            "http://localhost.example", "http://127.1",
        ]
        let result = await client(transport).pendingOutOfBandOperations(refused.map { registration($0) })
        #expect(transport.requests.isEmpty)
        #expect(result.errors.count == refused.count)
        #expect(result.errors.allSatisfy { $0.networkFailure?.kind == .insecureTransport })
        #expect(result.errors.map(\.server) == refused)
        #expect(result.errors.allSatisfy { $0.message.contains("https://") })
    }

    /// A password in a registration's URL is neither sent nor shown: the server is named with
    /// `***` for it and the request is refused (libcurl would send it as a Basic authorization).
    @Test func aServerURLWithUserInformationIsRefusedAndNotShown() async throws {
        let transport = FakeTransport { _ in Self.ok([]) }
        let result = await client(transport).pendingOutOfBandOperations([
            registration("https://device:s3cret@backend.example/prefix"),
            registration("https://device@backend.example"),
        ])
        #expect(transport.requests.isEmpty)
        // Masked, not removed: the name stays apart from the same backend registered without them.
        #expect(result.errors.map(\.server) == ["https://***@backend.example/prefix", "https://***@backend.example"])
        #expect(result.errors.allSatisfy { $0.networkFailure?.kind == .invalidURL })
        for error in result.errors {
            #expect(!"\(error) \(error.message)".contains("s3cret") && !error.message.contains("device@"), "\(error)")
        }
    }

    @Test func otherSchemesAreInvalidURLs() async {
        let transport = FakeTransport { _ in Self.ok([]) }
        let result = await client(transport).pendingOutOfBandOperations([
            registration("ftp://backend.example"), registration("file:///tmp"),
        ])
        #expect(transport.requests.isEmpty)
        #expect(result.errors.map { $0.networkFailure?.kind } == [.invalidURL, .invalidURL])
    }

    /// A path that does not start with `/` would run on from the host: `.evil.example/x` after
    /// `https://backend.example` names another host, which would get the Device-Signature.
    @Test func aPathThatIsNotAbsoluteIsAnInvalidURL() async {
        let transport = FakeTransport { _ in Self.ok([]) }
        let registrations = [".evil.example/x/{deviceId}", "@evil.example/{deviceId}", ":8443/{deviceId}"].map {
            FetchRegistration(
                server: URL(string: "https://backend.example")!, deviceId: "d", dispatchTargetId: "t", key: key,
                paths: FetchPaths(pendingOperations: $0))
        }
        let result = await client(transport).pendingOutOfBandOperations(registrations)
        #expect(transport.requests.isEmpty, "\(transport.requests.map(\.url))")
        #expect(result.errors.map { $0.networkFailure?.kind } == [.invalidURL, .invalidURL, .invalidURL])
        #expect(result.errors.allSatisfy { $0.message.contains("start with /") }, "\(result.errors.map(\.message))")
    }

    /// The path is appended to the server URL's text: a query or fragment there would swallow it
    /// (`https://b/api?t=1` + the path asks `/api` with the query `t=1/…`), and a template without
    /// `{deviceId}` (or with it twice) would not ask for this device's operations.
    @Test func aServerURLWithAQueryOrAPathWithoutOneDeviceIdIsAnInvalidURL() async throws {
        let transport = FakeTransport { _ in Self.ok([]) }
        let servers = ["https://backend.example/api?t=1", "https://backend.example/api#x", "https://backend.example/?"]
        let templates = ["/ops/pending", "/ops/{deviceId}/{deviceId}"]
        let registrations =
            try servers.map { registration($0) }
            + templates.map {
                FetchRegistration(
                    server: try #require(URL(string: "https://backend.example")), deviceId: "d", dispatchTargetId: "t",
                    key: key, paths: FetchPaths(pendingOperations: $0))
            }
        let result = await client(transport).pendingOutOfBandOperations(registrations)
        #expect(transport.requests.isEmpty, "\(transport.requests.map(\.url))")
        #expect(result.errors.map { $0.networkFailure?.kind } == Array(repeating: .invalidURL, count: 5))
        let messages = result.errors.map(\.message)
        #expect(messages.prefix(3).allSatisfy { $0.contains("query or fragment") }, "\(messages)")
        #expect(messages.suffix(2).allSatisfy { $0.contains("{deviceId} exactly once") }, "\(messages)")
        #expect(registrations.allSatisfy { $0.pendingOperationsURL == nil })
    }

    @Test func loopbackHTTPAndAnyHTTPSAreSent() async {
        let transport = FakeTransport { _ in Self.ok([]) }
        let allowed = [
            "http://127.0.0.1:8080", "http://127.200.3.4", "http://localhost:1", "http://LOCALHOST", "http://[::1]:9",
            "http://[0:0:0:0:0:0:0:1]", "https://backend.example", "https://10.0.0.1",
        ]
        let result = await client(transport).pendingOutOfBandOperations(allowed.map { registration($0) })
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(transport.requests.count == allowed.count)
    }

    @Test func aKeyThatCannotBeLoadedFailsOnlyItsRegistration() async throws {
        let transport = FakeTransport { _ in
            Self.ok([FakeBackend.operation(1, "link", "good", server: "https://good.example")])
        }
        let broken = FetchRegistration(
            server: URL(string: "https://broken.example")!, deviceId: "d", dispatchTargetId: "t",
            signingKey: SigningKeySource(label: "test key") {
                throw DeviceSigningError(.wrongPassphrase, "The passphrase does not open the key.")
            })
        let result = await client(transport).pendingOutOfBandOperations([broken, registration("https://good.example")])
        #expect(result.operations.map(\.token) == ["good"])
        let error = try #require(result.errors.first)
        #expect(result.errors.count == 1)
        #expect(error.code == "deviceProtectionError")
        #expect(error.server == "https://broken.example")
        #expect(error.message.contains("wrongPassphrase"))
        #expect(transport.requests(toHost: "broken.example").isEmpty)
    }

    @Test func keyStoreFailuresAreDeviceProtectionErrors() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "fetch-client-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try KeyStore(directory: directory)
        let keyId = try store.save(
            key, metadata: KeyMetadata(publicKey: key.publicKey, created: Date()),
            passphrase: SecureBytes(Array("right".utf8)))
        let missing = String(repeating: "A", count: 43)
        let transport = FakeTransport { _ in Self.ok([]) }
        func stored(_ host: String, _ keyId: String, _ passphrase: String?) -> FetchRegistration {
            FetchRegistration(
                server: URL(string: "https://\(host)")!, deviceId: "d", dispatchTargetId: "target-1",
                signingKey: .keyStore(store, keyId: keyId, passphrase: passphrase.map { SecureBytes(Array($0.utf8)) }))
        }
        let good = stored("good.example", keyId, "right")
        let result = await client(transport).pendingOutOfBandOperations(
            [stored("wrong.example", keyId, "wrong"), stored("missing.example", missing, "right"), good])
        #expect(result.errors.map(\.code) == ["deviceProtectionError", "deviceProtectionError"])
        #expect(result.errors.map(\.server) == ["https://wrong.example", "https://missing.example"])
        #expect(transport.requests.map { $0.url.host } == ["good.example"])
        #expect(good.signingKey.isLoaded)
    }
}

import DeviceSigning
import FetchChannel
import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

/// The fetch and redemption clients over the package's transport (libcurl on Linux) against the
/// reference backend on loopback (port 0, stopped by each test). Clock skew and expiry are set
/// through the emulator's clock.
@Suite(.dedicatedThread) struct FetchAgainstReferenceBackendTests {
    let key: P256.Signing.PrivateKey
    let deviceId = "device-integration"

    init() throws {
        key = try P256.Signing.PrivateKey()
    }

    /// A started backend with this device's dispatch target registered, and its registration.
    func backend(_ configuration: ReferenceBackend.Configuration = .init()) throws -> (
        ReferenceBackend, FetchRegistration
    ) {
        let backend = try ReferenceBackend.start(configuration)
        do {
            let target = try backend.registerDispatchTarget(deviceId: deviceId, signatureKey: key.publicKey)
            let registration = FetchRegistration(
                server: backend.baseURL, deviceId: deviceId, dispatchTargetId: target, key: key)
            return (backend, registration)
        } catch {
            backend.stop()
            throw error
        }
    }

    /// ±2 s, widened by however long the fetch took: an offset measured across a request that
    /// spent E ms in flight (a loaded CI machine) can be off by up to E ms, whichever way it is
    /// measured (the backend's serverTime against the signing time, or Date against the midpoint).
    static func measurementUncertaintyMillis(since began: ContinuousClock.Instant) -> Int64 {
        let elapsed = ContinuousClock.now - began
        return 2_000 + elapsed.components.seconds * 1_000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    }

    @Test func fiveBackendsAtOnce() async throws {
        let (healthy, healthyRegistration) = try backend()
        defer { healthy.stop() }
        let dispatched = try ["firebase-cloud-messaging", "png-qr-code", "link"].map {
            try healthy.dispatch(deviceId: deviceId, channel: $0)
        }
        let (skewed, skewedRegistration) = try backend(.init(clockOffsetMillis: 600_000))
        defer { skewed.stop() }
        try skewed.dispatch(deviceId: deviceId, channel: "link")
        let (missing, missingRegistration) = try backend()
        defer { missing.stop() }
        try missing.injectFault(EmulatorFault(endpoint: .operations, kind: .status, status: 404))
        let (garbage, garbageRegistration) = try backend()
        defer { garbage.stop() }
        try garbage.injectFault(EmulatorFault(endpoint: .operations, kind: .garbage))
        let port = try RefusedPort.make()
        let silentRegistration = FetchRegistration(
            server: URL(string: "http://127.0.0.1:\(port)")!, deviceId: deviceId,
            dispatchTargetId: "nobody", key: key)

        let client = FetchClient()
        let began = ContinuousClock.now
        let result = await client.pendingOutOfBandOperations(
            [healthyRegistration, skewedRegistration, silentRegistration, missingRegistration, garbageRegistration])
        let uncertainty = Self.measurementUncertaintyMillis(since: began)

        #expect(result.operations.map(\.token) == dispatched.map(\.token))
        #expect(result.operations.map(\.dispatchChannel) == [.pushNotification, .qrCode, .link])
        #expect(result.operations.map(\.creationTimeInEpochMillis) == dispatched.map(\.creationTimeInEpochMillis))
        #expect(result.operations.allSatisfy { $0.server == healthyRegistration.serverName })

        #expect(result.errors.count == 4)
        #expect(
            result.errors.map(\.code) == [
                "clockSkewTooBig", "networkError", "operationNotSupportedByBackend", "invalidResponse",
            ])
        #expect(
            result.errors.map(\.server)
                == [skewedRegistration, silentRegistration, missingRegistration, garbageRegistration].map(\.serverName))
        let skew = try #require(result.errors.first)
        let offset = try #require(skew.measuredOffsetMillis)
        #expect(abs(offset - 600_000) <= uncertainty, "measured \(offset) ms, allowed ±\(uncertainty) ms")
        #expect(skew.toleranceMillis == 60_000)
        #expect(skew.message.contains("behind"))
        #expect(result.errors[1].networkFailure?.kind == .connectionRefused)
        #expect(result.errors[2].httpError?.status == 404)
        #expect(skewed.statistics.requests(to: .operations) == 1, "the .report policy does not retry")
    }

    @Test func compensationSucceedsOnTheSingleRetry() async throws {
        let (skewed, registration) = try backend(.init(clockOffsetMillis: 600_000))
        defer { skewed.stop() }
        let operation = try skewed.dispatch(deviceId: deviceId, channel: "png-qr-code")
        let client = FetchClient(
            configuration: FetchClientConfiguration(clockSkewPolicy: .compensate(maximumOffsetMillis: 3_600_000)))
        let began = ContinuousClock.now
        let result = await client.pendingOutOfBandOperations([registration])
        let uncertainty = Self.measurementUncertaintyMillis(since: began)
        #expect(result.errors.isEmpty, "\(result.errors)")
        #expect(result.operations.map(\.token) == [operation.token])
        #expect(skewed.statistics.requests(to: .operations) == 2, "one rejected request and one retry")
        let estimate = try #require(client.estimator.estimatedOffsetMillis(for: registration.serverName))
        #expect(abs(estimate - 600_000) <= uncertainty, "estimate \(estimate) ms, allowed ±\(uncertainty) ms")
    }

    @Test func reportPolicyDoesNotRetry() async throws {
        let (skewed, registration) = try backend(.init(clockOffsetMillis: -600_000))
        defer { skewed.stop() }
        let began = ContinuousClock.now
        let result = await FetchClient().pendingOutOfBandOperations([registration])
        let uncertainty = Self.measurementUncertaintyMillis(since: began)
        #expect(result.errors.map(\.code) == ["clockSkewTooBig"])
        let offset = try #require(result.errors.first?.measuredOffsetMillis)
        #expect(abs(offset + 600_000) <= uncertainty, "measured \(offset) ms, allowed ±\(uncertainty) ms")
        #expect(result.errors.first?.message.contains("ahead of") == true)
        #expect(skewed.statistics.requests(to: .operations) == 1)
    }

    @Test func redeemOnceThenAlreadyRedeemed() async throws {
        let (healthy, registration) = try backend()
        defer { healthy.stop() }
        for channel in ["firebase-cloud-messaging", "png-qr-code", "link"] {
            try healthy.dispatch(deviceId: deviceId, channel: channel)
        }
        let fetched = await FetchClient().pendingOutOfBandOperations([registration])
        #expect(fetched.operations.count == 3)
        let redemption = RedemptionClient()
        for operation in fetched.operations {
            let redeemed = try await redemption.redeem(operation.payload).get()
            #expect(redeemed.statusCode == 1200)
            #expect(redeemed.op == "Auth")
            #expect(redeemed.uafRequest?.isEmpty == false)
            #expect((redeemed.lifetimeMillis ?? 0) > 0)
            let again = await redemption.redeem(operation.payload)
            #expect(again.failureCode == "tokenAlreadyRedeemed")
            #expect(again.failure?.httpError?.status == 410)
            #expect(again.failure?.httpError?.bodyExcerpt.contains(operation.token) == false)
        }
        let statistics = healthy.statistics
        #expect(fetched.operations.allSatisfy { statistics.redemptions[$0.token] == 1 })
        // Redeemed operations are no longer pending.
        #expect(await FetchClient().pendingOutOfBandOperations([registration]).operations.isEmpty)
    }

    @Test func expiredTokenIsTokenExpired() async throws {
        let clock = ManualWallClock(millis: 1_700_000_000_000)
        let (healthy, _) = try backend(.init(clock: clock))
        defer { healthy.stop() }
        let operation = try healthy.dispatch(deviceId: deviceId, channel: "link", lifetimeSeconds: 60)
        clock.advance(byMillis: 60_001)
        let result = await RedemptionClient().redeem(
            PendingOutOfBandOperation.RedeemData(token: operation.token, redeemUrl: operation.redeemURL))
        #expect(result.failureCode == "tokenExpired")
        #expect(result.failure?.message.contains("expired") == true)
        #expect(healthy.statistics.redemptions[operation.token] == nil)
    }

    @Test func transportFaultsMapToTypedErrors() async throws {
        let faults: [(EmulatorFault.Kind, String, String)] = [
            (.oversized, "invalidResponse", InvalidResponse.Kind.tooLarge.rawValue),
            (.wrongContentType, "invalidResponse", InvalidResponse.Kind.malformed.rawValue),
            (.close, "networkError", NetworkFailure.Kind.connectionLost.rawValue),
        ]
        var backends: [ReferenceBackend] = []
        defer { backends.forEach { $0.stop() } }
        var registrations: [FetchRegistration] = []
        for (kind, _, _) in faults {
            let (backend, registration) = try backend()
            try backend.injectFault(EmulatorFault(endpoint: .operations, kind: kind))
            backends.append(backend)
            registrations.append(registration)
        }
        let result = await FetchClient().pendingOutOfBandOperations(registrations)
        #expect(result.errors.count == faults.count)
        for ((fault, code, kind), error) in zip(faults, result.errors) {
            #expect(error.code == code, "\(fault): \(error) \(String(describing: error.networkFailure))")
            let causeKind = error.networkFailure?.kind.rawValue ?? error.invalidResponse?.kind.rawValue
            #expect(causeKind == kind, "\(fault): \(error)")
        }
        #expect(result.errors.first?.message.contains("1048576") == true, "the oversized answer was cut off")
    }

    @Test func aHangingAnswerTimesOut() async throws {
        // The emulator announces one byte more than it sends and keeps the connection open.
        let (hanging, registration) = try backend()
        defer { hanging.stop() }
        try hanging.injectFault(EmulatorFault(endpoint: .operations, kind: .hang))
        let client = FetchClient(configuration: FetchClientConfiguration(requestTimeout: .milliseconds(300)))
        let started = ContinuousClock.now
        let result = await client.pendingOutOfBandOperations([registration])
        #expect(result.errors.map { $0.networkFailure?.kind } == [.timedOut])
        // The hang lasts until the backend stops: any bound well below that proves the client's own
        // timeout ended it. Loose, because a loaded two-core machine can hold a test for seconds.
        #expect(ContinuousClock.now - started < .seconds(45), "the client's own timeout ends the request")
    }

    @Test func cancellingTheFetchCancelsTheRequest() async throws {
        let (slow, registration) = try backend()
        defer { slow.stop() }
        let hold = slow.holdNextAnswer(to: .operations)
        defer { hold.release() }
        let fetch = Task { await FetchClient().pendingOutOfBandOperations([registration]) }
        // Cancelled once the backend holds the request (waited for on a thread of its own: this
        // test's thread runs the fetch).
        #expect(await DedicatedThreads.run { hold.waitUntilHeld(seconds: 45) }, "the request never arrived")
        let cancelled = ContinuousClock.now
        fetch.cancel()
        let result = await fetch.value
        // Without the cancellation, the request would end by its own timeout (timedOut).
        #expect(result.errors.map { $0.networkFailure?.kind } == [.cancelled])
        #expect(ContinuousClock.now - cancelled < .seconds(45), "cancellation does not wait for the held answer")
    }

    @Test func plainHTTPToAnotherHostIsRefusedWithoutARequest() async throws {
        let (healthy, registration) = try backend()
        defer { healthy.stop() }
        var remote = registration
        // The backend's own port, under a name that is not loopback: refused before any connection.
        remote.server = URL(string: "http://fetchchannel.invalid:\(healthy.baseURL.port ?? 80)")!
        let result = await FetchClient().pendingOutOfBandOperations([remote])
        #expect(result.errors.map { $0.networkFailure?.kind } == [.insecureTransport])
        let redeem = await RedemptionClient().redeem(
            PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: "http://fetchchannel.invalid/redeem"))
        #expect(redeem.failure?.networkFailureKind == .insecureTransport)
        #expect(healthy.statistics.requests(to: .operations) == 0)
    }
}

extension Result where Failure == RedemptionError {
    var failure: RedemptionError? {
        if case .failure(let error) = self { return error }
        return nil
    }

    var failureCode: String? { failure?.code }
}

extension RedemptionError {
    var networkFailureKind: NetworkFailure.Kind? {
        if case .networkError(_, let cause) = self { return cause.kind }
        return nil
    }
}

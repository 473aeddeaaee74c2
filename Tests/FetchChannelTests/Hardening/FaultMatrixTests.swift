import DeviceSigning
import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannel

/// Every device endpoint the client calls × every fault the emulator injects: the client returns
/// the expected typed error within its timeout, a healthy backend's operations still come back,
/// nothing hangs, and no descriptor leaks. The table is printed when a row fails.
///
/// Endpoints: `operations` (fetch) and `redeem`. The `targets` endpoint is called only by the CLI's
/// register/rotate, not by these clients. Redemption carries no Device-Signature, so clock skew
/// does not apply to it.
@Suite(.dedicatedThread) struct FaultMatrixTests {
    enum Fault: String, CaseIterable, Sendable {
        case delayBeyondTimeout = "delay 8 s (timeout 4 s)"
        case status500 = "500"
        case status503 = "503"
        case garbage
        case oversized
        case close = "close without answer"
        case hang = "answer then hang"
        case wrongContentType = "wrong content type"
        case skewAhead = "server clock +10 min"
        case skewBehind = "server clock -10 min"

        func apply(to backend: ReferenceBackend, endpoint: EmulatorEndpoint) throws {
            switch self {
            case .delayBeyondTimeout: try backend.injectFault(.init(endpoint: endpoint, kind: .delay, seconds: 8))
            case .status500: try backend.injectFault(.init(endpoint: endpoint, kind: .status, status: 500))
            case .status503: try backend.injectFault(.init(endpoint: endpoint, kind: .status, status: 503))
            case .garbage: try backend.injectFault(.init(endpoint: endpoint, kind: .garbage))
            case .oversized: try backend.injectFault(.init(endpoint: endpoint, kind: .oversized))
            case .close: try backend.injectFault(.init(endpoint: endpoint, kind: .close))
            case .hang: try backend.injectFault(.init(endpoint: endpoint, kind: .hang))
            case .wrongContentType: try backend.injectFault(.init(endpoint: endpoint, kind: .wrongContentType))
            case .skewAhead: backend.clockOffsetMillis = 600_000
            case .skewBehind: backend.clockOffsetMillis = -600_000
            }
        }
    }

    /// The expected error code of the fetch client for a fault on `operations`.
    static let fetchExpectations: [Fault: String] = [
        .delayBeyondTimeout: "networkError", .status500: "serverError", .status503: "serverError",
        .garbage: "invalidResponse", .oversized: "invalidResponse", .close: "networkError",
        .hang: "networkError", .wrongContentType: "invalidResponse",
        .skewAhead: "clockSkewTooBig", .skewBehind: "clockSkewTooBig",
    ]

    /// The expected redemption error for a fault on `redeem` (nil: the redemption succeeds).
    /// Redemption has four outcomes only, so every malformed answer (garbage, oversized, not JSON
    /// by its content type) is `unknown`. Moving the server clock 10 minutes ahead passes the
    /// operation's 5-minute lifetime: the token is expired, which is the backend's truth.
    static let redeemExpectations: [Fault: String?] = [
        .delayBeyondTimeout: "networkError", .status500: "unknown", .status503: "unknown",
        .garbage: "unknown", .oversized: "unknown", .close: "networkError",
        .hang: "networkError", .wrongContentType: "unknown",
        .skewAhead: "tokenExpired", .skewBehind: nil,
    ]

    /// Long enough for a 1 MiB answer under AddressSanitizer on two cores, short enough for CI.
    static let timeout = Duration.seconds(4)
    /// "Nothing hangs": every row ends well before this. The wall time is printed but not held to
    /// the timeout itself: in a full parallel run on two cores, blocking tests can hold the
    /// cooperative threads for seconds and delay any async continuation. That the timeout fired
    /// (and not the 8 s answer) is checked by the failure kind, `timedOut`.
    static let noHangBound = Duration.seconds(20)

    /// For faults that only a timeout can end, the failure must say so.
    static func endsByTimeout(_ fault: Fault) -> Bool { fault == .delayBeyondTimeout || fault == .hang }

    /// A transport of the row's own, released when the row's client is: the production transport
    /// keeps connections alive for the process, so only a released transport must close them all.
    static func rowTransport() -> any HTTPTransport {
        #if os(Linux)
            CurlTransport()
        #else
            DefaultTransport.make()
        #endif
    }

    /// True once every connection to `backend` is closed: a client that leaked a socket would keep
    /// one open (the server sees descriptors from its side; the process's own count is shared with
    /// the tests running in parallel). Polls the server's counter, which has no event to wait on.
    func connectionsClosed(_ backends: ReferenceBackend...) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if backends.allSatisfy({ $0.serverStatistics.openConnections == 0 }) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }

    func table(_ rows: [String]) -> String {
        "\nendpoint   | fault                     | expected             | got\n" + rows.joined(separator: "\n")
    }

    @Test func operationsEndpointUnderEveryFault() async throws {
        let key = try P256.Signing.PrivateKey()
        var rows: [String] = []
        var failed = false
        for fault in Fault.allCases {
            let healthy = try ReferenceBackend.start()
            let faulty = try ReferenceBackend.start()
            defer {
                healthy.stop()
                faulty.stop()
            }
            let healthyTarget = try healthy.registerDispatchTarget(deviceId: "d", signatureKey: key.publicKey)
            let faultyTarget = try faulty.registerDispatchTarget(deviceId: "d", signatureKey: key.publicKey)
            let expectedToken = try healthy.dispatch(deviceId: "d", channel: "link").token
            try faulty.dispatch(deviceId: "d", channel: "link")
            try fault.apply(to: faulty, endpoint: .operations)

            let began = ContinuousClock.now
            // A temporary client: it and its transport are released at the end of the statement.
            let result = await FetchClient(
                configuration: .init(requestTimeout: Self.timeout), clock: SystemWallClock(),
                estimator: ClockSkewEstimator(), transport: Self.rowTransport(),
                timer: ContinuousRequestTimer()
            ).pendingOutOfBandOperations([
                FetchRegistration(server: healthy.baseURL, deviceId: "d", dispatchTargetId: healthyTarget, key: key),
                FetchRegistration(server: faulty.baseURL, deviceId: "d", dispatchTargetId: faultyTarget, key: key),
            ])
            let elapsed = ContinuousClock.now - began
            let closed = await connectionsClosed(healthy, faulty)
            let expected = Self.fetchExpectations[fault] ?? "?"
            let got = result.errors.map(\.code).joined(separator: ",")
            let timedOut = !Self.endsByTimeout(fault) || result.errors.first?.networkFailure?.kind == .timedOut
            let ok =
                got == expected && result.errors.first?.server == faulty.baseURL.absoluteString.trimmingSuffix("/")
                && result.operations.map(\.token) == [expectedToken] && timedOut && elapsed < Self.noHangBound && closed
            failed = failed || !ok
            rows.append(
                "operations | \(fault.rawValue.padding(toLength: 25, withPad: " ", startingAt: 0)) | \(expected.padding(toLength: 20, withPad: " ", startingAt: 0)) | \(got) in \(elapsed)\(closed ? "" : ", a connection left open")\(ok ? "" : "  <-- FAILED")"
            )
        }
        #expect(!failed, "\(table(rows))")
    }

    @Test func redeemEndpointUnderEveryFault() async throws {
        var rows: [String] = []
        var failed = false
        for fault in Fault.allCases {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let operation = try backend.dispatch(deviceId: "d", channel: "firebase-cloud-messaging")
            try fault.apply(to: backend, endpoint: .redeem)
            let began = ContinuousClock.now
            let outcome = await RedemptionClient(
                requestTimeout: Self.timeout, transport: Self.rowTransport(),
                timer: ContinuousRequestTimer()
            )
            .redeem(PendingOutOfBandOperation.RedeemData(token: operation.token, redeemUrl: operation.redeemURL))
            let elapsed = ContinuousClock.now - began
            let closed = await connectionsClosed(backend)
            let got: String?
            switch outcome {
            case .success: got = nil
            case .failure(let error): got = error.code
            }
            let expected = Self.redeemExpectations[fault] ?? nil
            var timedOut = !Self.endsByTimeout(fault)
            if case .failure(.networkError(_, let cause)) = outcome { timedOut = timedOut || cause.kind == .timedOut }
            let ok = got == expected && timedOut && elapsed < Self.noHangBound && closed
            failed = failed || !ok
            rows.append(
                "redeem     | \(fault.rawValue.padding(toLength: 25, withPad: " ", startingAt: 0)) | \((expected ?? "success").padding(toLength: 20, withPad: " ", startingAt: 0)) | \(got ?? "success") in \(elapsed)\(closed ? "" : ", a connection left open")\(ok ? "" : "  <-- FAILED")"
            )
        }
        #expect(!failed, "\(table(rows))")
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}

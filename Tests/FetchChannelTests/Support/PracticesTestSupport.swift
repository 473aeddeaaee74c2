import DeviceSigning
import Foundation
import Testing

@testable import FetchChannel

/// The fetch-practices tests (`swift test --filter Practices`): every suite of this folder is
/// nested in this one, which also holds the builders they share. Many tests wait for the code
/// under test to reach a point (a call held by a fake); if a broken rule means it never does, the
/// time limit turns the hang into a failure.
@Suite(.timeLimit(.minutes(2))) enum Practices {
    static let server = "https://backend.example"

    static func payload(_ token: String) -> PendingOutOfBandOperation.Payload {
        .init(
            contentType: "application/json", version: "1",
            redeemData: .init(token: token, redeemUrl: redeemURL))
    }

    static func operation(
        _ token: String, created: Int64, channel: DispatchChannel = .pushNotification,
        server: String = Practices.server
    ) -> PendingOutOfBandOperation {
        PendingOutOfBandOperation(
            creationTimeInEpochMillis: created, dispatchChannel: channel,
            payload: payload(token), server: server)
    }

    static let redeemURL = server + "/nevisfido/token/redeem/authentication"
    static let answer = RedeemedOperation(body: [
        "statusCode": .integer(1200), "uafRequest": .string("[]"),
        "op": .string("Auth"), "lifetimeMillis": .integer(300_000),
    ])
    static let networkFailure = RedemptionError.networkError(
        url: redeemURL, cause: NetworkFailure(.connectionRefused, detail: "injected"))
    static let serverFailure = RedemptionError.unknown(
        url: redeemURL, httpError: HTTPErrorInfo(status: 503, bodyExcerpt: ""),
        reason: "The backend did not accept the token.")
    static let alreadyRedeemed = RedemptionError.tokenAlreadyRedeemed(
        url: redeemURL, httpError: HTTPErrorInfo(status: 410, bodyExcerpt: #"{"errorCode":"TOKEN_ALREADY_REDEEMED"}"#))
    static let expired = RedemptionError.tokenExpired(
        url: redeemURL, httpError: HTTPErrorInfo(status: 410, bodyExcerpt: #"{"errorCode":"TOKEN_EXPIRED"}"#))
    static let cancelled = RedemptionError.networkError(
        url: redeemURL, cause: NetworkFailure(.cancelled, detail: "cancelled"))

    /// Yields until `condition` holds; false if it still does not after `attempts` yields. For
    /// waiting on the code under test without sleeping and without hanging when it is broken.
    static func eventually(attempts: Int = 100_000, _ condition: () async -> Bool) async -> Bool {
        for _ in 0..<attempts {
            if await condition() { return true }
            await Task.yield()
        }
        return await condition()
    }

    /// A private temporary directory, removed by `body`'s end.
    @discardableResult
    static func withTemporaryDirectory<R>(_ body: (URL) async throws -> R) async rethrows -> R {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("fetchchannel-practices-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await body(directory)
    }
}

/// The seeded generator of the randomized tests (SplitMix64): reproducible from the printed seed.
typealias SeededRandom = SplitMix64

extension RedemptionIdentity {
    /// `token` at the origin of ``Practices/server``, where ``Practices/payload(_:)`` redeems.
    static func onBackend(_ token: String) -> RedemptionIdentity {
        RedemptionIdentity(origin: "https://backend.example:443", token: token)
    }
}

/// What a redeemer answers.
typealias RedemptionResult = Result<RedeemedOperation, RedemptionError>

/// A redeemer that answers from a closure at once, and counts calls per token.
final class ImmediateRedeemer: OperationRedeeming {
    private let answer: @Sendable (String, Int) -> RedemptionResult
    private let counts = Locked([String: Int]())

    /// `answer(token, attempt)`: attempt is 1 for the first call for that token.
    init(_ answer: @escaping @Sendable (String, Int) -> RedemptionResult = { _, _ in .success(Practices.answer) }) {
        self.answer = answer
    }

    func redeem(_ payload: PendingOutOfBandOperation.Payload) async -> RedemptionResult {
        let token = payload.redeemData.token
        let attempt = counts.withLock { counts -> Int in
            counts[token, default: 0] += 1
            return counts[token]!
        }
        return answer(token, attempt)
    }

    func calls(_ token: String) -> Int { counts.withLock { $0[token] ?? 0 } }
    var totalCalls: Int { counts.withLock { $0.values.reduce(0, +) } }
}

/// A redeemer whose calls wait until the test resolves them, in front of a fake backend that
/// redeems each token once. It records what the exactly-once rules forbid: two calls for one
/// token at the same time, and a call for a token this device already redeemed.
final class GatedRedeemer: OperationRedeeming {
    struct Violation: Sendable, CustomStringConvertible {
        let description: String
    }

    private struct Waiting {
        let id: Int
        let token: String
        let continuation: CheckedContinuation<RedemptionResult, Never>
    }

    private struct State {
        var nextId = 0
        var waiting: [Waiting] = []
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var calls: [String: Int] = [:]
        /// Calls made and not yet answered, per token.
        var active: [String: Int] = [:]
        var redeemedAtBackend: [String: Int] = [:]
        var violations: [Violation] = []
        var failures: [String: Int] = [:]
        /// Calls cancelled before they started waiting.
        var cancelledEarly: Set<Int> = []
    }

    private let state = Locked(State())

    func redeem(_ payload: PendingOutOfBandOperation.Payload) async -> RedemptionResult {
        let token = payload.redeemData.token
        // A call the rules forbid is recorded and answered at once (a failure for a concurrent
        // call, "already redeemed" after a success), so a broken pipeline fails a test instead of
        // leaving it waiting for an answer nobody gives.
        let (id, immediate) = state.withLock { state -> (Int, RedemptionResult?) in
            state.nextId += 1
            state.calls[token, default: 0] += 1
            if state.redeemedAtBackend[token] != nil {
                state.violations.append(
                    Violation(description: "a redeem call for \(token), which this device redeemed"))
                return (state.nextId, .failure(Practices.alreadyRedeemed))
            }
            if state.active[token, default: 0] > 0 {
                state.violations.append(Violation(description: "two redeem calls for \(token) at once"))
                state.failures[token, default: 0] += 1
                return (state.nextId, .failure(Practices.networkFailure))
            }
            state.active[token, default: 0] += 1
            return (state.nextId, nil)
        }
        if let immediate { return immediate }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
                    if state.cancelledEarly.remove(id) != nil {
                        state.active[token]! -= 1
                        return nil
                    }
                    state.waiting.append(Waiting(id: id, token: token, continuation: continuation))
                    let count = state.waiting.count
                    let ready = state.watchers.filter { $0.count <= count }.map(\.continuation)
                    state.watchers.removeAll { $0.count <= count }
                    return ready
                }
                guard let ready else {
                    continuation.resume(returning: RedemptionResult.failure(Practices.cancelled))
                    return
                }
                for watcher in ready { watcher.resume() }
            }
        } onCancel: {
            let cancelled = self.state.withLock { state -> Waiting? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else {
                    state.cancelledEarly.insert(id)
                    return nil
                }
                state.active[token]! -= 1
                return state.waiting.remove(at: index)
            }
            cancelled?.continuation.resume(returning: RedemptionResult.failure(Practices.cancelled))
        }
    }

    /// Returns once at least `count` calls are waiting.
    func waitForWaiting(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.waiting.count >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// The tokens of the waiting calls, oldest first.
    var waitingTokens: [String] { state.withLock { $0.waiting.map(\.token) } }

    /// Answers the oldest waiting call for `token`: `succeed` redeems it at the fake backend
    /// (`tokenAlreadyRedeemed` if it was redeemed there before), otherwise a network failure.
    /// Returns false when no call for `token` waits.
    @discardableResult
    func resolve(_ token: String, succeed: Bool) -> Bool {
        let call = state.withLock { state -> (Waiting, RedemptionResult)? in
            guard let index = state.waiting.firstIndex(where: { $0.token == token }) else { return nil }
            let call = state.waiting.remove(at: index)
            state.active[token]! -= 1
            guard succeed else {
                state.failures[token, default: 0] += 1
                return (call, .failure(Practices.networkFailure))
            }
            if state.redeemedAtBackend[token] != nil { return (call, .failure(Practices.alreadyRedeemed)) }
            state.redeemedAtBackend[token] = 1
            return (call, .success(Practices.answer))
        }
        guard let (waiting, outcome) = call else { return false }
        waiting.continuation.resume(returning: outcome)
        return true
    }

    func calls(_ token: String) -> Int { state.withLock { $0.calls[token] ?? 0 } }
    /// Calls for `token` answered with an injected failure.
    func failures(_ token: String) -> Int { state.withLock { $0.failures[token] ?? 0 } }
    var redeemedAtBackend: Set<String> { state.withLock { Set($0.redeemedAtBackend.keys) } }
    var violations: [Violation] { state.withLock { $0.violations } }
}

import DeviceSigning
import Foundation

@testable import FetchChannel

/// A transport that answers from a handler and records every request it was given.
final class FakeTransport: HTTPTransport {
    typealias Handler = @Sendable (TransportRequest) async -> TransportResult

    private let handler: Handler
    private let recorded = Locked<[TransportRequest]>([])

    init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    func send(_ request: TransportRequest) async -> TransportResult {
        recorded.withLock { $0.append(request) }
        return await handler(request)
    }

    var requests: [TransportRequest] { recorded.withLock { $0 } }

    func requests(toHost host: String) -> [TransportRequest] {
        requests.filter { $0.url.host == host }
    }
}

/// Timeouts that never expire (the timer sleeps until cancelled).
struct NeverTimer: RequestTimer {
    func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: .seconds(86_400))
    }
}

/// Timeouts that expire at once.
struct ImmediateTimer: RequestTimer {
    func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
    }
}

/// Parks requests until the test releases them (one by one, by key) or their task is cancelled,
/// and lets the test wait until a number of them have arrived.
final class Gate: Sendable {
    private struct State {
        var cancelled: Set<UUID> = []
        var waiting: [UUID: (String, CheckedContinuation<Bool, Never>)] = [:]
        var arrivals = 0
        var arrivalWaiters: [(Int, CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    /// Waits until released (true) or cancelled (false).
    func park(_ key: String) async -> Bool {
        let id = UUID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let (alreadyCancelled, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                    state.arrivals += 1
                    let arrivals = state.arrivals
                    let ready = state.arrivalWaiters.filter { $0.0 <= arrivals }.map(\.1)
                    state.arrivalWaiters.removeAll { $0.0 <= arrivals }
                    if state.cancelled.contains(id) { return (true, ready) }
                    state.waiting[id] = (key, continuation)
                    return (false, ready)
                }
                ready.forEach { $0.resume() }
                if alreadyCancelled { continuation.resume(returning: false) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                state.cancelled.insert(id)
                return state.waiting.removeValue(forKey: id)?.1
            }
            continuation?.resume(returning: false)
        }
    }

    /// Releases every request parked under `key`.
    func release(_ key: String) {
        let continuations = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            let matching = state.waiting.filter { $0.value.0 == key }
            for id in matching.keys { state.waiting[id] = nil }
            return matching.values.map(\.1)
        }
        continuations.forEach { $0.resume(returning: true) }
    }

    /// Counts a request that is answered at once (not parked) as arrived.
    func arrive() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.arrivals += 1
            let arrivals = state.arrivals
            let ready = state.arrivalWaiters.filter { $0.0 <= arrivals }.map(\.1)
            state.arrivalWaiters.removeAll { $0.0 <= arrivals }
            return ready
        }
        ready.forEach { $0.resume() }
    }

    /// Returns once `count` requests have arrived in total.
    func waitForArrivals(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.arrivals >= count { return true }
                state.arrivalWaiters.append((count, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    var arrivals: Int { state.withLock { $0.arrivals } }
}

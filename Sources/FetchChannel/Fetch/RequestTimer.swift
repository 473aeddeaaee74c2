/// Waits out a request timeout. `package` so that tests can expire (or never expire) timeouts
/// without waiting, and so that the CLI's requests get the same exact timeouts.
package protocol RequestTimer: Sendable {
    /// Returns after `duration`; throws when the calling task is cancelled first.
    func sleep(for duration: Duration) async throws
    /// True when the timer is the real passage of time, which a transport that keeps the
    /// request's timeout itself (``HTTPTransport/keepsTimeoutExactly``) already enforces.
    var isRealTime: Bool { get }
}

extension RequestTimer {
    package var isRealTime: Bool { false }
}

/// Real time: `Task.sleep` on the continuous clock.
package struct ContinuousRequestTimer: RequestTimer {
    package init() {}

    package var isRealTime: Bool { true }

    package func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}

extension HTTPTransport {
    /// The longest timeout there is (``FetchClientConfiguration/requestTimeout``): one day, as the
    /// libcurl transport keeps it. A longer one waited for as it is could overflow the clock's
    /// instant (`Task.sleep` traps then).
    package static var longestTimeout: Duration { .seconds(86_400) }

    /// `timeout` cut to ``longestTimeout``.
    static func raceableTimeout(_ timeout: Duration) -> Duration { min(timeout, longestTimeout) }

    /// `send`, but a `timedOut` failure when `timer` expires first (the request is then cancelled).
    ///
    /// A transport that keeps the timeout exactly in real time needs no race against a real-time
    /// timer: the request is sent as it is, without the two child tasks and the sleep's pending
    /// timer that the race costs every request (docs/ARCHITECTURE.md, "Threads").
    package func send(_ request: TransportRequest, timer: any RequestTimer) async -> TransportResult {
        if keepsTimeoutExactly, timer.isRealTime {
            return await send(request)
        }
        return await withTaskGroup(of: TransportResult?.self) { group in
            group.addTask { await self.send(request) }
            group.addTask {
                do {
                    try await timer.sleep(for: Self.raceableTimeout(request.timeout))
                } catch {
                    return nil  // cancelled: the request finished first, or the fetch was cancelled
                }
                return .failure(NetworkFailure(.timedOut, detail: "no complete answer within \(request.timeout)"))
            }
            var outcome: TransportResult = .failure(NetworkFailure(.cancelled, detail: "cancelled"))
            while let next = await group.next() {
                guard let result = next else { continue }
                outcome = result
                break
            }
            group.cancelAll()
            return outcome
        }
    }
}

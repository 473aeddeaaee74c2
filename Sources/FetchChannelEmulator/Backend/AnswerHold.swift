import Dispatch
import Synchronization

/// One answer of the reference backend held back until the test that asked for it lets it go.
///
/// Requests that must overlap (two registrations of one key at once) are then ordered by the
/// test, which sees the first request arrive before it starts the second, instead of by a delay
/// it hopes is long enough. The request is processed when it arrives; only its answer waits.
/// Package access: the control API has no such fault, and its contract stays as it is.
package final class AnswerHold: Sendable {
    /// The longest an answer is held that nobody lets go. Only a safety net: the backend's
    /// `stop()` (and deinit) releases every hold before it joins the server's threads.
    static let longestHold = DispatchTimeInterval.seconds(120)

    package let endpoint: EmulatorEndpoint
    private let arrival = DispatchSemaphore(value: 0)
    private let releasing = DispatchSemaphore(value: 0)
    private let released = Atomic<Bool>(false)

    init(endpoint: EmulatorEndpoint) {
        self.endpoint = endpoint
    }

    /// Waits until the held request has arrived and been processed, at most `seconds`. False
    /// when it did not arrive in time. (A request that arrives after ``release()`` is not held,
    /// but counts as arrived.)
    package func waitUntilHeld(seconds: Double) -> Bool {
        guard arrival.wait(timeout: .now() + seconds) == .success else { return false }
        arrival.signal()  // it stays arrived for a later wait
        return true
    }

    /// Lets the held answer go, or the request through at once if it has not arrived yet.
    /// Idempotent.
    package func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        releasing.signal()
    }

    /// On the server thread that answers the held request: says it arrived, then waits for the
    /// release (at most ``longestHold``).
    func holdAnswer() {
        arrival.signal()
        _ = releasing.wait(timeout: .now() + Self.longestHold)
        releasing.signal()  // a later wait passes too
    }
}

import DeviceSigning
import FetchChannel

/// Wraps a fetcher so that each fetch, once its answer is in, waits until the driver releases it:
/// how long a fetch takes becomes a choice of the simulation instead of loopback speed.
final class GatedFetcher: PendingOperationsFetching {
    private struct State {
        var held: CheckedContinuation<Void, Never>?
        var watcher: CheckedContinuation<Void, Never>?
    }

    private let inner: any PendingOperationsFetching
    private let state = Locked(State())

    init(_ inner: any PendingOperationsFetching) {
        self.inner = inner
    }

    func hasRegistration() async -> Bool {
        await inner.hasRegistration()
    }

    func fetch() async -> PendingOutOfBandOperationsResult {
        let result = await inner.fetch()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let watcher = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.held = continuation
                defer { state.watcher = nil }
                return state.watcher
            }
            watcher?.resume()
        }
        return result
    }

    /// Returns once a fetch has its answer and waits to be released.
    func waitUntilHeld() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let held = state.withLock { state -> Bool in
                if state.held != nil { return true }
                state.watcher = continuation
                return false
            }
            if held { continuation.resume() }
        }
    }

    /// Lets the held fetch return.
    func release() {
        let held = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.held = nil }
            return state.held
        }
        held?.resume()
    }
}

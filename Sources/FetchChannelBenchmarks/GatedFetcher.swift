import DeviceSigning
import FetchChannel

/// Wraps a fetcher so that each fetch, once its answer is in, waits until the driver releases it:
/// how long a fetch takes becomes a choice of the simulation instead of loopback speed. Once
/// opened (the run is over, or failed), no fetch waits any more.
final class GatedFetcher: PendingOperationsFetching {
    private struct State {
        var held: CheckedContinuation<Void, Never>?
        var watcher: ResumeOnce<Bool>?
        var open = false
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
            let (passes, watcher) = state.withLock { state -> (Bool, ResumeOnce<Bool>?) in
                if state.open { return (true, nil) }
                state.held = continuation
                defer { state.watcher = nil }
                return (false, state.watcher)
            }
            if passes { continuation.resume() }
            watcher?.resume(true)
        }
        return result
    }

    /// True once a fetch has its answer and waits to be released; false when none does within
    /// `limit`, or the gate is opened first.
    func waitUntilHeld(within limit: Duration) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let watcher = ResumeOnce(continuation)
            let now = state.withLock { state -> Bool? in
                if state.held != nil { return true }
                if state.open { return false }
                state.watcher = watcher
                return nil
            }
            if let now {
                watcher.resume(now)
            } else {
                watcher.resume(false, after: limit)
            }
        }
    }

    /// Whether a wait for a held fetch is under way (for tests).
    var hasWatcher: Bool {
        state.withLock { $0.watcher != nil }
    }

    /// Lets the held fetch return.
    func release() {
        let held = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.held = nil }
            return state.held
        }
        held?.resume()
    }

    /// Lets the held fetch return and every later one pass without waiting, and ends a wait for a
    /// held fetch: what a run that ends, or fails halfway, leaves behind.
    func open() {
        let (held, watcher) = state.withLock { state in
            state.open = true
            defer { (state.held, state.watcher) = (nil, nil) }
            return (state.held, state.watcher)
        }
        held?.resume()
        watcher?.resume(false)
    }
}

import DeviceSigning

@testable import FetchChannel

/// A fetcher in front of a fake backend: the test decides whether a user is registered, what the
/// backend holds, and (when gated) when each fetch returns. It records a second fetch started
/// while one is under way, which single flight forbids.
final class ScriptedFetcher: PendingOperationsFetching {
    private struct State {
        var registered = true
        var operations: [PendingOutOfBandOperation] = []
        var errors: [PendingOutOfBandOperationsError] = []
        var calls = 0
        var underWay = 0
        var overlaps = 0
        var held: [CheckedContinuation<Void, Never>] = []
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())
    private let gated: Bool

    /// With `gated`, every fetch takes the backend's answer when called and returns it only
    /// when ``releaseAll()`` is called.
    init(
        gated: Bool = false, operations: [PendingOutOfBandOperation] = [],
        errors: [PendingOutOfBandOperationsError] = []
    ) {
        self.gated = gated
        state.withLock {
            $0.operations = operations
            $0.errors = errors
        }
    }

    var registered: Bool {
        get { state.withLock { $0.registered } }
        set { state.withLock { $0.registered = newValue } }
    }

    /// What the backend holds (pending operations) and which backends fail.
    func set(operations: [PendingOutOfBandOperation], errors: [PendingOutOfBandOperationsError] = []) {
        state.withLock {
            $0.operations = operations
            $0.errors = errors
        }
    }

    /// Removes `token` from the backend's pending operations (redeemed or expired there).
    func remove(_ token: String) {
        state.withLock { $0.operations.removeAll { $0.token == token } }
    }

    func hasRegistration() async -> Bool { registered }

    func fetch() async -> PendingOutOfBandOperationsResult {
        let result = state.withLock { state -> PendingOutOfBandOperationsResult in
            state.calls += 1
            state.underWay += 1
            if state.underWay > 1 { state.overlaps += 1 }
            return PendingOutOfBandOperationsResult(operations: state.operations, errors: state.errors)
        }
        if gated {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.held.append(continuation)
                    let count = state.held.count
                    let ready = state.watchers.filter { $0.count <= count }.map(\.continuation)
                    state.watchers.removeAll { $0.count <= count }
                    return ready
                }
                for watcher in ready { watcher.resume() }
            }
        }
        state.withLock { $0.underWay -= 1 }
        return result
    }

    /// Returns once `count` fetches are held.
    func waitForHeld(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.held.count >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    var heldCount: Int { state.withLock { $0.held.count } }

    /// Lets every held fetch return.
    func releaseAll() {
        let held = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.held.removeAll() }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    var calls: Int { state.withLock { $0.calls } }
    /// Fetches started while another was under way: single flight makes this 0.
    var overlaps: Int { state.withLock { $0.overlaps } }
}

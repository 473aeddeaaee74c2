import DeviceSigning

/// A continuation that the first of several callers resumes (an answer, or a deadline passed);
/// later calls do nothing.
final class ResumeOnce<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, Never>?
        var timer: Task<Void, Never>?
    }

    private let state: Locked<State>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        state = Locked(State(continuation: continuation))
    }

    /// Resumes with `value`, unless resumed already.
    func resume(_ value: Value) {
        let (continuation, timer) = state.withLock { state in
            defer { state = State() }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume(returning: value)
    }

    /// Resumes with `value` once `limit` has passed, unless resumed before (the timer then goes).
    func resume(_ value: Value, after limit: Duration) {
        let timer = Task {
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            self.resume(value)
        }
        let pending = state.withLock { state in
            if state.continuation != nil { state.timer = timer }
            return state.continuation != nil
        }
        if !pending { timer.cancel() }
    }
}

/// Waits of the benchmarks that end: a row waiting for something that never comes fails with
/// its reason instead of hanging the bench.
enum BoundedWait {
    /// The value of `task`, or nil when it has not finished within `limit`. The task itself goes
    /// on: the caller cancels it, or ends what it waits for.
    static func value<Value: Sendable>(of task: Task<Value, Never>, within limit: Duration) async -> Value? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
            let once = ResumeOnce(continuation)
            once.resume(nil, after: limit)
            Task { once.resume(await task.value) }
        }
    }
}

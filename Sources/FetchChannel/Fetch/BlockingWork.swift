import DeviceSigning
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Work that may wait for long on something outside the process, run on a thread of its own so
/// that it never holds one of the task pool's few threads meanwhile: an operation with a TPM-bound
/// key (a TPM that stopped answering is waited for up to its timeout), a key's first load
/// (read from disk, derived from a passphrase, loaded into a TPM), or a write of the
/// redeemed-token file (another process's lock is waited for up to 30 s). A thread per call costs tens of
/// microseconds, nothing beside a TPM's milliseconds; a software key that is loaded never comes
/// here (docs/ARCHITECTURE.md, "Threads").
///
/// When no thread can be made (the process is out of threads or memory), the work runs on the
/// caller's thread instead: slower for the pool, but never a caller left waiting for work that
/// never started.
package enum BlockingWork {
    /// Starts `work` on a new thread; false when none could be made (and `work` did not run).
    package typealias Spawn = @Sendable (_ work: @escaping @Sendable () -> Void) -> Bool

    /// Told of every run started by the task that binds it and the tasks it starts (a test
    /// counts what its fetch sent off the pool, whatever other tests do meanwhile).
    @TaskLocal static var observer: (@Sendable () -> Void)?

    static func run<T: Sendable>(
        spawn: Spawn = startDetachedThread, _ body: @escaping @Sendable () throws -> T
    ) async throws -> T {
        observer?()
        return try await withCheckedThrowingContinuation { continuation in
            let work: @Sendable () -> Void = { continuation.resume(with: Result { try body() }) }
            if !spawn(work) { work() }
        }
    }

    static func run<T: Sendable>(spawn: Spawn = startDetachedThread, _ body: @escaping @Sendable () -> T) async -> T {
        observer?()
        return await withCheckedContinuation { continuation in
            let work: @Sendable () -> Void = { continuation.resume(returning: body()) }
            if !spawn(work) { work() }
        }
    }

    /// Lets go of `value` on a thread of its own, where its release may wait: the last reference
    /// to a TPM-bound key waits for its TPM to unload it. Without a thread, it is let go here.
    static func release<Value: Sendable>(_ value: consuming Value, spawn: Spawn = startDetachedThread) {
        observer?()
        // The carrier holds the one reference, and the thread empties it: the release happens
        // there, whichever of the two threads lets go of the carrier last.
        let carrier = Carrier(consume value)
        let work: @Sendable () -> Void = { carrier.empty() }
        if !spawn(work) { work() }
    }

    private final class Carrier<Value: Sendable>: Sendable {
        private let value: Locked<Value?>

        init(_ value: consuming Value) { self.value = Locked(value) }

        func empty() {
            let taken = value.withLock { $0.take() }
            _ = taken
        }
    }

    /// Like ``run(spawn:_:)``, for work whose result a cancelled caller no longer wants: a fetch's
    /// key load, signature or decryption. A caller cancelled before the work starts gets
    /// `CancellationError` and the work never runs; one cancelled while it runs gets
    /// `CancellationError` at once, and the work ends on its own thread, its result dropped (a
    /// key it loaded is kept by its source). So a TPM that stopped answering holds a cancelled
    /// fetch no longer than the cancellation. Not for work whose end the caller must know, such
    /// as a write of the redeemed-token file.
    static func runUnlessCancelled<T: Sendable>(
        spawn: Spawn = startDetachedThread, _ body: @escaping @Sendable () throws -> T
    ) async throws -> T {
        observer?()
        let handoff = Handoff<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard handoff.park(continuation) else { return }
                let work: @Sendable () -> Void = { handoff.finish(Result { try body() }) }
                if !spawn(work) { work() }
            }
        } onCancel: {
            handoff.cancel()
        }
    }

    /// The caller's continuation between the work and a cancellation: whichever comes first
    /// resumes it, exactly once.
    private final class Handoff<T: Sendable>: Sendable {
        private enum State {
            case starting
            case parked(CheckedContinuation<T, any Error>)
            case cancelled
            case resumed
        }

        private let state = Locked(State.starting)

        /// Parks the caller; false when it was cancelled first (it is resumed with
        /// `CancellationError` here, and the work must not start).
        func park(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
            let wasCancelled = state.withLock { state -> Bool in
                guard case .starting = state else { return true }
                state = .parked(continuation)
                return false
            }
            if wasCancelled { continuation.resume(throwing: CancellationError()) }
            return !wasCancelled
        }

        func cancel() {
            take(settingTo: .cancelled)?.resume(throwing: CancellationError())
        }

        func finish(_ result: Result<T, any Error>) {
            take(settingTo: .resumed)?.resume(with: result)
        }

        /// The parked continuation, if nobody resumed it yet; resumed outside the lock.
        private func take(settingTo next: State) -> CheckedContinuation<T, any Error>? {
            state.withLock { state in
                switch state {
                case .parked(let continuation):
                    state = .resumed
                    return continuation
                case .starting:
                    state = next
                    return nil
                case .cancelled, .resumed:
                    return nil
                }
            }
        }
    }

    /// pthread_create, detached: Foundation's `Thread.start()` reports no failure to make one.
    package static let startDetachedThread: Spawn = { work in
        final class Box: Sendable {
            let work: @Sendable () -> Void
            init(_ work: @escaping @Sendable () -> Void) { self.work = work }
        }
        let context = Unmanaged.passRetained(Box(work)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                Unmanaged<Box>.fromOpaque(raw).takeRetainedValue().work()
                return nil
            }, context)
        guard created == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}

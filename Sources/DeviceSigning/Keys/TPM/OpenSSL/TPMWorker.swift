import Dispatch

/// Runs the operations of one TPM connection one at a time, and waits for each at most the
/// configured timeout.
///
/// The tpm2 provider keeps one ESAPI context per library context, which is not safe for
/// concurrent use, and tss2's swtpm and mssim transports wait for an answer without a deadline: a
/// TPM that accepts a connection and never answers (a stopped simulator) would block its caller
/// for ever. So each operation runs on this worker's serial queue while the caller waits with a
/// deadline. When the deadline passes, or the connection fails (after which ESAPI refuses every
/// further command), the worker is marked failed: later operations fail at once with the first
/// reason, and a blocked operation, if it ever returns, only releases what it holds. Nothing is
/// retried here; a key's next operation loads it again on a new connection (``TPMKeyHandle``).
final class TPMWorker: Sendable {
    /// Which TPM, in words for error messages.
    let target: String
    private let timeout: Duration
    private let timeoutSeconds: Double
    private let queue = DispatchQueue(label: "DeviceSigning.TPMWorker")
    private let failure = Locked<DeviceSigningError?>(nil)
    /// Jobs that were running when their caller stopped waiting and have not returned: the queue
    /// is stuck behind them.
    private let overdue = Locked(0)
    /// The semaphores of the callers waiting for their jobs, woken when the connection fails.
    private let waiters = Locked<[DispatchSemaphore]>([])
    /// Marks this worker's queue (no other), so that work already on it runs inline instead of
    /// waiting for itself.
    private let onWorker = DispatchSpecificKey<Bool>()
    /// How a caller waits for its job: (the job's semaphore, the timeout in seconds) -> whether it
    /// was signalled in time. A test decides when a deadline passes without waiting for it.
    typealias JobWait = @Sendable (DispatchSemaphore, Double) -> DispatchTimeoutResult
    private let waitForJob: JobWait
    /// Runs on the worker after each job's caller was signalled: a test holds the worker there.
    private let afterJob: @Sendable () -> Void

    init(
        configuration: TPMConfiguration,
        waitForJob: @escaping JobWait = { finished, seconds in finished.wait(timeout: .now() + seconds) },
        afterJob: @escaping @Sendable () -> Void = {}
    ) {
        target = configuration.target
        timeout = configuration.timeout
        timeoutSeconds = configuration.timeoutSeconds
        self.waitForJob = waitForJob
        self.afterJob = afterJob
        queue.setSpecific(key: onWorker, value: true)
    }

    /// Whether the connection failed (or stopped answering): nothing more is sent through it.
    var hasFailed: Bool { failure.withLock { $0 != nil } }

    /// How many callers wait for a job of theirs (for tests).
    var waitingCallers: Int { waiters.withLock { $0.count } }

    /// How many jobs hold the queue after their caller gave up (for tests).
    var overdueJobs: Int { overdue.withLock { $0 } }

    /// Runs `body` on the worker and returns its result, or throws `.tpmUnavailable` when the
    /// worker failed earlier or `body` does not finish within the timeout. `body` must own what it
    /// uses (copies, not borrowed buffers): it may outlive this call.
    func perform<T: Sendable>(_ action: String, _ body: @escaping @Sendable () throws -> T) throws -> T {
        if let earlier = failure.withLock({ $0 }) { throw failedEarlier(action, earlier) }
        // The operation's earlier steps used up its time: nothing is sent, and the connection,
        // which did not fail, stays usable.
        guard TPMDeadline.remaining(cappedAt: timeoutSeconds) > 0 else {
            throw DeviceSigningError(
                .tpmUnavailable,
                "Could not \(action): the TPM operation's time (\(timeout)) ran out before this step, "
                    + "waiting for the TPM reached through \(target).")
        }
        return try wait(action, runsAfterFailure: false, body)
    }

    /// Runs `body` on the worker and waits for it within the timeout. A job queued behind one
    /// that failed the connection is not run, and its caller stops waiting as soon as the failure
    /// is known; unless it `runsAfterFailure` (a release, which is waited for in full).
    private func wait<T: Sendable>(
        _ action: String, runsAfterFailure: Bool, _ body: @escaping @Sendable () throws -> T
    ) throws -> T {
        // The queued block hands `body` and its result over through boxes it empties, so that the
        // last reference to a TPM object is never dropped on the worker after the caller went on:
        // a process that exits right after would free the key while OpenSSL cleans up at exit.
        let job = Locked<(@Sendable () throws -> T)?>(body)
        let state = Locked(JobState<T>.pending)
        let finished = DispatchSemaphore(value: 0)
        if !runsAfterFailure { waiters.withLock { $0.append(finished) } }
        queue.async { [self] in
            // Recorded here, after this job's result and before the next job starts, so that the
            // next one does not run on the failed connection.
            if let connectionFailure = runJob(action, job, state: state, runsAfterFailure: runsAfterFailure) {
                markFailed(connectionFailure)
            }
            finished.signal()
            afterJob()
        }
        // A failure recorded after `perform` looked and before this caller was listed woke nobody.
        if !runsAfterFailure, hasFailed { finished.signal() }
        let allowed = TPMDeadline.remaining(cappedAt: timeoutSeconds)
        _ = waitForJob(finished, allowed)
        waiters.withLock { $0.removeAll { $0 === finished } }
        let outcome = state.withLock { state -> Result<T, any Error>? in
            switch state {
            case .done(let result):
                state = .taken
                return result
            case .pending:
                state = .abandoned(whileRunning: false)
                return nil
            case .running:
                state = .abandoned(whileRunning: true)
                overdue.withLock { $0 += 1 }
                return nil
            case .taken, .abandoned:
                return nil
            }
        }
        guard let result = outcome else {
            if !runsAfterFailure, let earlier = failure.withLock({ $0 }) { throw failedEarlier(action, earlier) }
            // A wait the operation's deadline cut to less than half the timeout proves nothing
            // against the connection (the job may only have been queued behind another caller's,
            // with a few milliseconds left): this operation fails, the connection stays in use, and
            // the next operation's own wait decides.
            if allowed < timeoutSeconds / 2 {
                throw DeviceSigningError(
                    .tpmUnavailable,
                    "Could not \(action): the TPM operation's time (\(timeout)) ran out while waiting for the "
                        + "TPM reached through \(target).")
            }
            let error = DeviceSigningError(
                .tpmUnavailable,
                "The TPM reached through \(target) did not answer "
                    + "within \(timeout) (trying to \(action)). Check that it is running and not overloaded; the "
                    + "connection is not used again.")
            markFailed(error)
            throw error
        }
        return try result.get()
    }

    /// Runs one queued job, unless its caller gave up on it before it started (a release always
    /// runs), and hands its result to `state`; the connection failure it met, if any. Its result
    /// is a local of this function, so the worker holds none of it once this returns, before the
    /// caller is signalled.
    private func runJob<T: Sendable>(
        _ action: String, _ job: Locked<(@Sendable () throws -> T)?>, state: Locked<JobState<T>>,
        runsAfterFailure: Bool
    ) -> DeviceSigningError? {
        let starts = state.withLock { state -> Bool in
            guard case .pending = state else { return runsAfterFailure }
            state = .running
            return true
        }
        let result: Result<T, any Error>?
        if !starts {
            job.withLock { $0 = nil }
            result = nil
        } else if !runsAfterFailure, let earlier = failure.withLock({ $0 }) {
            job.withLock { $0 = nil }
            result = .failure(failedEarlier(action, earlier))
        } else {
            result = Self.run(job)
        }
        state.withLock { state in
            switch state {
            case .abandoned(whileRunning: true): overdue.withLock { $0 -= 1 }
            case .abandoned: break
            default: state = .done(result)
            }
        }
        guard case .failure(let error as DeviceSigningError) = result, error.code == .tpmUnavailable else { return nil }
        return error
    }

    private func failedEarlier(_ action: String, _ earlier: DeviceSigningError) -> DeviceSigningError {
        DeviceSigningError(
            .tpmUnavailable,
            "Could not \(action): the connection to the TPM failed "
                + "earlier (\(earlier.reason)) Trying again opens a new connection.",
            openSSLErrors: earlier.openSSLErrors)
    }

    /// One job's hand-over: its result, until the caller takes it or stops waiting.
    private enum JobState<T> {
        case pending
        case running
        case done(Result<T, any Error>?)
        case taken
        /// Given up on by the caller; while running, it counts in `overdue` until it returns.
        case abandoned(whileRunning: Bool)
    }

    /// Runs `body` (releasing TPM objects, which flushes them from the TPM) on the worker and
    /// waits for it within the timeout, so that a process that exits right after does not leave
    /// them loaded in a TPM without a resource manager; also after the connection failed (ESAPI
    /// then refuses at once). Inline when already on the worker; queued without waiting only while
    /// a job that stopped answering holds the queue (it then runs if that job ever returns).
    func release(_ body: @escaping @Sendable () -> Void) {
        if DispatchQueue.getSpecific(key: onWorker) == true {
            body()
        } else if overdue.withLock({ $0 > 0 }) {
            queue.async(execute: body)
        } else {
            _ = try? wait("release a key", runsAfterFailure: true) { body() }
        }
    }

    /// Waits, at most the timeout, until every job queued so far has run: the releases queued
    /// behind a job that stopped answering have flushed their keys from the TPM once it answers
    /// again, before a new connection loads keys into it (a TPM without a resource manager holds
    /// only a few). Not on the worker itself.
    func settle() {
        let settled = DispatchSemaphore(value: 0)
        queue.async { settled.signal() }
        _ = settled.wait(timeout: .now() + TPMDeadline.remaining(cappedAt: timeoutSeconds))
    }

    /// Takes the job out of its box and runs it; the closure (and what it captured) is released
    /// when this returns, before the caller is signalled. Leaves this thread's OpenSSL error queue
    /// empty.
    static func run<T>(_ job: Locked<(@Sendable () throws -> T)?>) -> Result<T, any Error>? {
        guard
            let body = job.withLock({ taken in
                defer { taken = nil }
                return taken
            })
        else { return nil }
        // A job that failed drained the queue into its error; what a successful one left (the
        // provider reports retries and warnings there) must not reach the next user of this
        // pooled thread.
        defer { OpenSSLErrorQueue.clear() }
        return Result { try body() }
    }

    /// Records the first failure and wakes every caller still waiting: their jobs will not run.
    private func markFailed(_ error: DeviceSigningError) {
        failure.withLock { if $0 == nil { $0 = error } }
        for waiter in waiters.withLock({ $0 }) { waiter.signal() }
    }
}

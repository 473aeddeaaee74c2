internal import COpenSSL
import Foundation
import Testing

@testable import DeviceSigning

/// The worker's bookkeeping on its own, with closures standing in for TPM commands (no TPM
/// needed): what runs after the connection failed, and what a release waits for.
@Suite struct TPMWorkerTests {
    private static let configuration = TPMConfiguration(tcti: "swtpm:host=127.0.0.1,port=9", timeout: .seconds(60))

    @Test func aJobQueuedBehindOneThatFailedTheConnectionDoesNotRun() async throws {
        let outcome = try await onOwnThread { () -> (DeviceSigningError?, DeviceSigningError?, Bool, Bool) in
            let worker = TPMWorker(configuration: Self.configuration)
            let started = DispatchSemaphore(value: 0)
            let gate = DispatchSemaphore(value: 0)
            let ran = Locked(false)
            let first = Locked<DeviceSigningError?>(nil)
            let firstDone = DispatchSemaphore(value: 0)
            Thread {
                let error = caught {
                    try worker.perform("fail") { () throws -> Void in
                        started.signal()
                        gate.wait()
                        throw DeviceSigningError(.tpmUnavailable, "the connection broke")
                    }
                }
                first.withLock { $0 = error }
                firstDone.signal()
            }.start()
            started.wait()
            // Queued while the first job holds the worker; the gate opens once it is queued.
            let second = Locked<DeviceSigningError?>(nil)
            let secondDone = DispatchSemaphore(value: 0)
            Thread {
                let error = caught { try worker.perform("sign") { ran.withLock { $0 = true } } }
                second.withLock { $0 = error }
                secondDone.signal()
            }.start()
            // Bounded, so that a worker that never counts the second caller fails the test rather
            // than hang it: the gate opens either way.
            let deadline = ContinuousClock.now + .seconds(60)
            var queued = true
            while worker.waitingCallers < 2 {
                guard ContinuousClock.now < deadline else {
                    queued = false
                    break
                }
                sched_yield()
            }
            gate.signal()
            firstDone.wait()
            secondDone.wait()
            return (first.withLock { $0 }, second.withLock { $0 }, ran.withLock { $0 }, queued)
        }
        #expect(outcome.3, "the second job was not seen waiting behind the first within 60 s")
        #expect(outcome.0?.reason == "the connection broke")
        #expect(outcome.1?.code == .tpmUnavailable)
        #expect(outcome.1?.reason.contains("failed earlier") == true, "\(outcome.1?.reason ?? "")")
        #expect(!outcome.2, "the job ran on the connection that had failed")
    }

    /// Only a job that was running when its caller gave up holds the queue. The callers woken by
    /// the failure used to count their jobs, which never started, as stuck too, and a release
    /// then went unwaited although nothing was stuck once the first job returned.
    @Test func onlyARunningJobThatOutlivesItsCallerHoldsTheQueue() async throws {
        let stuck = try await onOwnThread { () -> Int in
            // The first caller's deadline passes (without waiting for it) once the second waits.
            // The second starts only after the first waits, so the first call is the first caller's.
            let firstWaits = DispatchSemaphore(value: 0)
            let secondWaits = DispatchSemaphore(value: 0)
            let calls = Locked(0)
            let worker = TPMWorker(configuration: Self.configuration) { finished, seconds in
                let call = calls.withLock { count -> Int in
                    count += 1
                    return count
                }
                guard call == 1 else {
                    secondWaits.signal()
                    return finished.wait(timeout: .now() + seconds)
                }
                firstWaits.signal()
                _ = secondWaits.wait(timeout: .now() + seconds)
                return .timedOut
            }
            let started = DispatchSemaphore(value: 0)
            let gate = DispatchSemaphore(value: 0)
            let callers = DispatchGroup()
            callers.enter()
            Thread {
                _ = caught {
                    try worker.perform("hang") { () -> Void in
                        started.signal()
                        gate.wait()
                    }
                }
                callers.leave()
            }.start()
            started.wait()
            firstWaits.wait()
            callers.enter()
            Thread {
                _ = caught { try worker.perform("sign") {} }
                callers.leave()
            }.start()
            callers.wait()
            let whileStuck = worker.overdueJobs
            gate.signal()
            return whileStuck
        }
        #expect(stuck == 1, "jobs counted as stuck: \(stuck)")
    }

    /// The provider leaves warnings on the queue of operations that succeed; the worker's
    /// threads are Dispatch's, shared with the rest of the process.
    @Test func aJobThatSucceedsLeavesTheThreadsOpenSSLErrorQueueEmpty() {
        ERR_clear_error()
        let job = Locked<(@Sendable () throws -> Int)?>({
            // Fails, leaving "unsupported" on the queue, as a provider's warning would.
            let context = EVP_PKEY_CTX_new_from_name(nil, "NO-SUCH-ALGORITHM", nil)
            EVP_PKEY_CTX_free(context)
            return ERR_peek_error() != 0 ? 1 : 0
        })
        let result: Result<Int, any Error>? = TPMWorker.run(job)
        #expect((try? result?.get()) == 1, "the job left nothing on the queue to begin with")
        #expect(ERR_peek_error() == 0, "a successful job left an error on this thread's queue")
        ERR_clear_error()
    }

    @Test func aReleaseAfterAnErrorIsWaitedFor() async throws {
        let released = try await onOwnThread { () -> Bool in
            let worker = TPMWorker(configuration: Self.configuration)
            _ = caught {
                try worker.perform("fail") { () throws -> Void in throw DeviceSigningError(.tpmUnavailable, "broke") }
            }
            let done = Locked(false)
            worker.release { done.withLock { $0 = true } }
            return done.withLock { $0 }
        }
        #expect(released, "release returned before the key was freed")
    }

    /// A job's result reaches its caller only: the worker holds no reference to it once the caller
    /// is signalled. Otherwise the last reference to a TPM key could be dropped on the worker after
    /// the caller went on (and a process exiting then frees it while OpenSSL cleans up).
    @Test func theWorkerKeepsNoReferenceToAResultAfterSignallingItsCaller() async throws {
        final class Probe: Sendable {}
        let unique = try await onOwnThread { () -> Bool in
            let held = DispatchSemaphore(value: 0)
            let worker = TPMWorker(configuration: Self.configuration, afterJob: { held.wait() })
            defer { held.signal() }
            var probe = try worker.perform("make a probe") { Probe() }
            return isKnownUniquelyReferenced(&probe)
        }
        #expect(unique, "the worker still held the result while its caller went on")
    }

    /// Inside an operation's deadline (``TPMDeadline``) a step waits only for what is left of it,
    /// not its own full timeout; an inner deadline cannot extend an outer one.
    @Test func aStepWaitsOnlyForWhatIsLeftOfTheOperationsDeadline() async throws {
        let waits = try await onOwnThread { () -> [Double] in
            let asked = Locked<[Double]>([])
            let worker = TPMWorker(configuration: Self.configuration) { finished, seconds in
                asked.withLock { $0.append(seconds) }
                return finished.wait(timeout: .now() + seconds)
            }
            _ = try worker.perform("answer") { 1 }
            _ = try TPMDeadline.within(seconds: 0.5) { try worker.perform("answer") { 1 } }
            _ = try TPMDeadline.within(seconds: 0.5) {
                try TPMDeadline.within(seconds: 60) { try worker.perform("answer") { 1 } }
            }
            return asked.withLock { $0 }
        }
        #expect(waits.count == 3)
        #expect(waits.first == 60, "without a deadline a step waits its own timeout")
        #expect(waits.dropFirst().allSatisfy { $0 > 0 && $0 <= 0.5 }, "\(waits)")
    }

    /// A step whose operation has no time left sends nothing and leaves the connection usable:
    /// it did not fail, the operation's earlier steps took the time.
    @Test func aStepWithNoTimeLeftSendsNothing() async throws {
        let (error, ran, failed) = try await onOwnThread { () -> (DeviceSigningError?, Bool, Bool) in
            let worker = TPMWorker(configuration: Self.configuration)
            let ran = Locked(false)
            let error = caught {
                try TPMDeadline.within(seconds: 0) { try worker.perform("sign") { ran.withLock { $0 = true } } }
            }
            return (error, ran.withLock { $0 }, worker.hasFailed)
        }
        #expect(error?.code == .tpmUnavailable)
        #expect(error?.reason.contains("ran out") == true, "\(String(describing: error))")
        #expect(!ran)
        #expect(!failed)
    }

    /// A wait cut well short by the operation's deadline does not mark the connection failed: the job
    /// may only have been queued behind another caller's, as here, and the TPM never asked.
    @Test func aWaitCutShortByTheDeadlineLeavesTheConnectionInUse() async throws {
        let (error, failed) = try await onOwnThread { () -> (DeviceSigningError?, Bool) in
            // Full waits are real; a shortened one is over at once, as if its time had passed.
            let worker = TPMWorker(configuration: Self.configuration) { finished, seconds in
                seconds < 60 ? .timedOut : finished.wait(timeout: .now() + seconds)
            }
            let started = DispatchSemaphore(value: 0)
            let gate = DispatchSemaphore(value: 0)
            let firstDone = DispatchSemaphore(value: 0)
            Thread {
                _ = try? worker.perform("hold the queue") { () -> Int in
                    started.signal()
                    gate.wait()
                    return 1
                }
                firstDone.signal()
            }.start()
            started.wait()
            let error = caught { _ = try TPMDeadline.within(seconds: 0.5) { try worker.perform("sign") { 2 } } }
            gate.signal()
            firstDone.wait()
            return (error, worker.hasFailed)
        }
        #expect(error?.code == .tpmUnavailable)
        #expect(error?.reason.contains("ran out while waiting") == true, "\(String(describing: error))")
        #expect(!failed, "a shortened wait marked the connection failed")
    }
}

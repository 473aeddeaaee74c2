import DeviceSigning
import Foundation
import Testing

/// `@Suite(.dedicatedThread)` or `@Test(.dedicatedThread)`: the test body runs on a thread of its
/// own, not on the two-thread cooperative pool. A body that blocks (socket I/O, subprocesses,
/// key derivations, load) would otherwise hold a pool thread, and every async test beside it
/// would wait: their timing would depend on what runs beside them (docs/ARCHITECTURE.md,
/// "Threads"). Nonisolated async code of the body runs there too, through a task executor
/// preference (SE-0417); actors keep their own executors.
public struct DedicatedThreadTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public init() {}

    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        // A body already moved (the trait given twice, by a suite and a nested one) stays where it
        // is: taking a second slot could wait for ever once every slot is held that way.
        guard !test.isSuite, !Self.isInsideScope else { return try await function() }
        await Self.slots.acquire()
        let executor = DedicatedThreadExecutor()
        defer {
            executor.shutDown()
            Self.slots.release()
        }
        try await Self.$isInsideScope.withValue(true) {
            try await withTaskExecutorPreference(executor) {
                try await function()
            }
        }
    }

    @TaskLocal private static var isInsideScope = false

    /// How many such bodies run at once: without a bound, every test so marked would start at
    /// once on its own thread, and two cores would be shared by dozens of servers and children.
    public static let concurrentBodies = 4
    private static let slots = AsyncSlots(concurrentBodies)
}

/// A counting semaphore that waits without holding a thread.
final class AsyncSlots: @unchecked Sendable {
    // @unchecked: `free` and `waiting` are guarded by `lock`.
    private let lock = NSLock()
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if free > 0 {
                free -= 1
                lock.unlock()
                continuation.resume()
            } else {
                waiting.append(continuation)
                lock.unlock()
            }
        }
    }

    func release() {
        lock.lock()
        if waiting.isEmpty {
            free += 1
            lock.unlock()
        } else {
            let next = waiting.removeFirst()
            lock.unlock()
            next.resume()
        }
    }
}

extension Trait where Self == DedicatedThreadTrait {
    /// Runs each test body on a thread of its own; see ``DedicatedThreadTrait``.
    public static var dedicatedThread: Self { DedicatedThreadTrait() }
}

/// A task executor with one thread that runs the jobs given to it in order, until shut down.
public final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs`, `isShutDown` and `hasEnded` are guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var isShutDown = false
    private var hasEnded = false

    private static let markerKey = "FetchChannelTestSupport.DedicatedThreadExecutor"

    /// Whether the calling code runs on the thread of such an executor.
    public static var isCurrentThreadDedicated: Bool {
        Thread.current.threadDictionary[markerKey] as? Bool == true
    }

    public init() {
        Thread { [self] in
            Thread.current.threadDictionary[Self.markerKey] = true
            runJobs()
        }.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        condition.lock()
        if hasEnded {
            condition.unlock()
            globalConcurrentExecutor.enqueue(job)
            return
        }
        jobs.append(UnownedJob(job))
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread finish the jobs it has, then end. Jobs enqueued after that go to the global
    /// executor: a task that prefers this executor and outlives the test is not stranded.
    public func shutDown() {
        condition.lock()
        isShutDown = true
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        while true {
            condition.lock()
            while jobs.isEmpty && !isShutDown { condition.wait() }
            if jobs.isEmpty {
                hasEnded = true
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

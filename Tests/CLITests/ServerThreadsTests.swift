import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelBenchmarks

/// The client-CPU rows subtract the backend's CPU by thread name: a backend started through
/// `ServerThreads` must run on threads the kernel knows by that name, every time.
@Suite(.dedicatedThread) struct ServerThreadsTests {
    static func kernelName() -> String {
        let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return comm.trimmingCharacters(in: .newlines)
    }

    @Test func theStartingThreadAndTheThreadsItCreatesCarryTheName() throws {
        for _ in 0..<20 {
            let names = try ServerThreads.start { () -> [String] in
                let child = Locked("")
                let done = DispatchSemaphore(value: 0)
                Thread {
                    child.withLock { $0 = Self.kernelName() }
                    done.signal()
                }.start()
                done.wait()
                return [Self.kernelName(), child.withLock { $0 }]
            }
            #expect(names == [ServerThreads.name, ServerThreads.name])
        }
    }

    /// The kernel's id of the calling thread, from `/proc/thread-self` (`<pid>/task/<tid>`).
    static func threadID() -> Int {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        return link.split(separator: "/").last.flatMap { Int($0) } ?? 0
    }

    /// A backend thread that ends between two readings (a kept-alive connection closed by the idle
    /// timeout while another variant is measured) must not take its whole life's CPU out of the
    /// window: the backend's share would go negative and be counted as the client's.
    @Test func aThreadThatEndsBetweenTwoReadingsDoesNotMakeTheDifferenceNegative() throws {
        let finish = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        let burner = try ServerThreads.start { () -> Int in
            let id = Locked(0)
            let burned = DispatchSemaphore(value: 0)
            Thread {
                id.withLock { $0 = Self.threadID() }
                // 50 ms of CPU on the thread's own clock (work, not a wait).
                let start = Measurement.threadCPUSeconds()
                while Measurement.threadCPUSeconds() - start < 0.05 {}
                burned.signal()
                finish.wait()
                ended.signal()
            }.start()
            burned.wait()
            return id.withLock { $0 }
        }
        try #require(burner > 0)
        let before = ServerThreads.reading()
        #expect((before.seconds[burner] ?? 0) >= 0.05, "the named thread's CPU is in the first reading")

        finish.signal()
        ended.wait()
        // Its body has returned; the kernel removes its task entry as the thread exits.
        let deadline = ContinuousClock.now + LooseTimeBounds.scaled(.seconds(10))
        while FileManager.default.fileExists(atPath: "/proc/self/task/\(burner)"), ContinuousClock.now < deadline {
            sched_yield()
        }
        try #require(!FileManager.default.fileExists(atPath: "/proc/self/task/\(burner)"), "the thread never ended")

        let after = ServerThreads.reading()
        #expect(after.seconds[burner] == nil)
        #expect(ServerThreads.cpuSeconds(from: before, to: after) >= 0)
    }

    /// Thread by thread: a thread in both readings counts its difference, a new one all of its CPU
    /// (a smaller reading under the same id is a new thread), an ended one nothing.
    @Test func theWindowIsCountedThreadByThread() {
        let before = ServerThreads.Reading(seconds: [1: 5, 2: 1, 3: 2])
        let after = ServerThreads.Reading(seconds: [1: 5.5, 3: 0.125, 4: 0.25])
        #expect(ServerThreads.cpuSeconds(from: before, to: after) == 0.5 + 0.125 + 0.25)
        #expect(ServerThreads.cpuSeconds(from: after, to: after) == 0)
    }

    /// Without a thread for the backend, the bench says so; it waited for ever on one that never ran.
    @Test func noThreadForTheBackendIsAnError() {
        #expect(throws: BenchmarkError.self) { _ = try ServerThreads.start(spawn: { _ in false }) { 1 } }
    }

    /// Without a thread for blocking work, it runs on the caller's thread instead of never.
    @Test func blockingWorkWithoutAThreadRunsOnTheCaller() async {
        #expect(await BlockingThread.run(spawn: { _ in false }) { 42 } == 42)
    }
}

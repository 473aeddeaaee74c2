import DeviceSigning
import Foundation

/// Tells the in-process reference backend's CPU apart from the client's.
///
/// A Linux thread inherits its creator's name, so a backend started from a thread named
/// ``name`` runs its accept and connection threads under that name too; their CPU time is read
/// from `/proc/self/task/*/schedstat` (nanoseconds). The client's CPU is then the process's
/// minus theirs, whatever thread (libcurl's, the task pool's) the client's work ran on.
enum ServerThreads {
    static let name = "fc-bench-server"

    /// `start`'s result, computed on a new thread named ``name``.
    ///
    /// The name is written to the running thread's `/proc/thread-self/comm` (proc(5): a thread
    /// may rename itself there; Glibc's module does not offer `pthread_setname_np`) and read back
    /// before `start` runs. Foundation's `Thread.name` is not enough: on Linux it reaches
    /// the kernel only when the `Thread` already knows its pthread, which a new thread can run
    /// ahead of, and a backend started under another name has its CPU counted as the client's.
    static func start<Value: Sendable>(_ start: @escaping @Sendable () throws -> Value) throws -> Value {
        let outcome = Locked<Result<Value, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let result = Result {
                try nameThisThread()
                return try start()
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        thread.start()
        done.wait()
        guard let result = outcome.withLock({ $0 }) else {
            throw BenchmarkError("the backend thread ended without a result")
        }
        return try result.get()
    }

    /// Names the calling thread ``name`` (threads it creates inherit the name) and checks that the
    /// kernel has it.
    static func nameThisThread() throws {
        let comm = "/proc/thread-self/comm"
        try? name.write(toFile: comm, atomically: false, encoding: .utf8)
        let recorded = try? String(contentsOfFile: comm, encoding: .utf8)
        guard recorded?.trimmingCharacters(in: .newlines) == name else {
            throw BenchmarkError("the backend's thread could not be named \(name) through \(comm)")
        }
    }

    /// CPU seconds used so far by the live threads named ``name``.
    static func cpuSeconds() -> Double {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var nanoseconds = 0.0
        for task in tasks {
            let directory = "/proc/self/task/\(task)/"
            guard let comm = try? String(contentsOfFile: directory + "comm", encoding: .utf8),
                comm.trimmingCharacters(in: .newlines) == name,
                let schedstat = try? String(contentsOfFile: directory + "schedstat", encoding: .utf8),
                let running = schedstat.split(separator: " ").first.flatMap({ Double($0) })
            else { continue }
            nanoseconds += running
        }
        return nanoseconds / 1e9
    }
}

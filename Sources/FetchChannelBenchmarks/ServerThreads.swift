import DeviceSigning
import FetchChannel
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
    static func start<Value: Sendable>(
        spawn: BlockingWork.Spawn = BlockingWork.startDetachedThread, _ start: @escaping @Sendable () throws -> Value
    ) throws -> Value {
        let outcome = Locked<Result<Value, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        // Not Foundation's `Thread.start()`, which reports no failure: the wait below would not end.
        let started = spawn {
            let result = Result {
                try nameThisThread()
                return try start()
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        guard started else { throw BenchmarkError("no thread could be made for the backend") }
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

    /// CPU seconds used so far by each live thread named ``name``, by thread id.
    struct Reading: Sendable, Equatable {
        var seconds: [Int: Double]
    }

    /// The CPU of the threads named ``name`` now, per thread.
    static func reading() -> Reading {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var seconds: [Int: Double] = [:]
        for task in tasks {
            let directory = "/proc/self/task/\(task)/"
            guard let id = Int(task),
                let comm = try? String(contentsOfFile: directory + "comm", encoding: .utf8),
                comm.trimmingCharacters(in: .newlines) == name,
                let schedstat = try? String(contentsOfFile: directory + "schedstat", encoding: .utf8),
                let running = schedstat.split(separator: " ").first.flatMap({ Double($0) })
            else { continue }
            seconds[id] = running / 1e9
        }
        return Reading(seconds: seconds)
    }

    /// CPU seconds the threads named ``name`` used between two readings, thread by thread. A sum
    /// of the live threads' CPU at each end would lose a thread that ended in between (a kept-alive
    /// connection closed by the idle timeout, or by its client, while another variant is measured)
    /// with its whole life's CPU, and the backend's share could come out negative, counted as the
    /// client's. So:
    /// - a thread in both readings counts its difference;
    /// - a thread only in the second started in between: all of its CPU is in the window;
    /// - a thread whose CPU went down is a new thread under a reused id: all of it counts;
    /// - a thread only in the first ended in between, and counts nothing. Its CPU up to the first
    ///   reading was outside the window; what it used inside the window before it ended cannot be
    ///   read any more. The threads that end inside a measured window are idle connections (the
    ///   window's own connection is opened before it and used throughout), whose last CPU is the
    ///   close, microseconds over a window of hundreds of fetches, counted as the client's.
    static func cpuSeconds(from first: Reading, to second: Reading) -> Double {
        second.seconds.reduce(0) { total, thread in
            let before = first.seconds[thread.key] ?? 0
            return total + (thread.value >= before ? thread.value - before : thread.value)
        }
    }
}

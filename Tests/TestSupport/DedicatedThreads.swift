import DeviceSigning
import Foundation

/// Blocking test bodies (socket I/O, subprocesses, spinning, scanning memory) run on threads of
/// their own, not on the cooperative pool that the other tests' async bodies need meanwhile: no
/// test's timing then depends on what runs beside it (docs/ARCHITECTURE.md, "Threads").
public enum DedicatedThreads {
    /// Runs `body(index)` on `count` new threads and returns the results in index order.
    public static func run<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) async -> [T] {
        await withCheckedContinuation { continuation in
            // Locked, not Mutex: a pthread mutex, which ThreadSanitizer understands.
            let results = Locked([Int: T]())
            let remaining = Locked(count)
            for index in 0..<count {
                Thread {
                    let value = body(index)
                    results.withLock { $0[index] = value }
                    let done = remaining.withLock { left -> Bool in
                        left -= 1
                        return left == 0
                    }
                    guard done else { return }
                    continuation.resume(returning: results.withLock { all in (0..<count).compactMap { all[$0] } })
                }.start()
            }
        }
    }

    /// Runs `body` on one new thread and returns its result.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    /// Runs throwing `body` on one new thread and returns its result or rethrows its error.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}

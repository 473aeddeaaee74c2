import Foundation

/// Work that may wait for long on something outside the process, run on a thread of its own so
/// that it never holds one of the task pool's few threads meanwhile: an operation with a TPM-bound
/// key (a TPM that stopped answering is waited for up to its timeout), or a key's first load
/// (read from disk, derived from a passphrase, loaded into a TPM). A thread per call costs tens of
/// microseconds, nothing beside a TPM's milliseconds; a software key that is loaded never comes
/// here (docs/ARCHITECTURE.md, "Threads").
enum BlockingWork {
    /// Whether the code running now is on one of its threads (tests check where work ran;
    /// Foundation does not name a new thread reliably on Linux).
    @TaskLocal static var isCurrent = false

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            start { continuation.resume(with: Result { try body() }) }
        }
    }

    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            start { continuation.resume(returning: body()) }
        }
    }

    private static func start(_ work: @escaping @Sendable () -> Void) {
        Thread { $isCurrent.withValue(true, operation: work) }.start()
    }
}

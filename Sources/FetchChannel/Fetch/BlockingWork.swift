import Foundation

/// Work that may wait for long on something outside the process, run on a thread of its own so
/// that it never holds one of the task pool's few threads meanwhile: an operation with a TPM-bound
/// key (a TPM that stopped answering is waited for up to its timeout), or a key's first load
/// (read from disk, derived from a passphrase, loaded into a TPM). A thread per call costs tens of
/// microseconds, nothing beside a TPM's milliseconds; a software key that is loaded never comes
/// here (docs/ARCHITECTURE.md, "Threads").
enum BlockingWork {
    /// Told of every run started by the task that binds it and the tasks it starts (a test
    /// counts what its fetch sent off the pool, whatever other tests do meanwhile).
    @TaskLocal static var observer: (@Sendable () -> Void)?

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        observer?()
        return try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        observer?()
        return await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }
}

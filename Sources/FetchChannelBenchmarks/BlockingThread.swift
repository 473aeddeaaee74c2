import Foundation

/// Blocking work (a C loop that waits on sockets) on a thread of its own, so that it never
/// holds one of the task pool's threads while it waits.
enum BlockingThread {
    static func run<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }
}

import FetchChannel
import Foundation

/// Blocking work (a C loop that waits on sockets) on a thread of its own, so that it never
/// holds one of the task pool's threads while it waits. When no thread can be made, it runs on
/// the caller's: slower for the pool, never a continuation left unresumed.
enum BlockingThread {
    static func run<Value: Sendable>(
        spawn: BlockingWork.Spawn = BlockingWork.startDetachedThread, _ body: @escaping @Sendable () -> Value
    ) async -> Value {
        await withCheckedContinuation { continuation in
            if !spawn({ continuation.resume(returning: body()) }) {
                continuation.resume(returning: body())
            }
        }
    }
}

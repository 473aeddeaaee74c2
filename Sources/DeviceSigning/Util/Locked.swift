import Foundation

/// A value that is only read or written while holding a lock; the one lock type of this package.
///
/// Not `Synchronization.Mutex`: on Linux that locks with raw futex calls, which ThreadSanitizer
/// does not model, so `swift test --sanitize=thread` reports false races on every access. `NSLock`
/// wraps a pthread mutex, which ThreadSanitizer understands, so every module stays checkable.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is touched only inside `withLock`, while `lock` is held.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

import Foundation

/// The deadline of the TPM operation under way on this thread or task, so that one operation
/// waits at most ``TPMConfiguration/timeout`` in all, as that promises: a key whose connection
/// failed first waits for the old connection's queue, connects again and loads its key file, then
/// signs or derives, and each of those steps waits only for what is left, not a timeout of its own.
enum TPMDeadline {
    @TaskLocal private static var current: ContinuousClock.Instant?

    /// Runs `body` with a deadline `seconds` from now, or the deadline already set when that one
    /// is earlier (an operation inside another keeps the outer one's).
    static func within<T>(seconds: Double, _ body: () throws -> T) rethrows -> T {
        // At most a year: far beyond any timeout, and no Duration arithmetic can overflow.
        let own = ContinuousClock.now.advanced(by: .milliseconds(Int64(min(max(seconds, 0), 31_536_000) * 1_000)))
        let deadline = current.map { min($0, own) } ?? own
        return try $current.withValue(deadline, operation: body)
    }

    /// How long a step may wait: `seconds` (its own timeout), or what is left of the operation's
    /// deadline when that is less; 0 once the deadline has passed.
    static func remaining(cappedAt seconds: Double) -> Double {
        guard let current else { return seconds }
        let left = ContinuousClock.now.duration(to: current).components
        return min(seconds, max(0, Double(left.seconds) + Double(left.attoseconds) / 1e18))
    }
}

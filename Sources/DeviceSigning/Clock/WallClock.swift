import Foundation

/// A source of wall-clock time in milliseconds since the Unix epoch.
///
/// Time is an input everywhere in this package: signers, verifiers, caches and the emulator take a
/// clock so that tests can move time without sleeping.
public protocol WallClock: Sendable {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    func nowMillis() -> Int64
}

/// The system's real-time clock.
public struct SystemWallClock: WallClock {
    public init() {}

    public func nowMillis() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}

/// A clock that moves only when told to: for tests, simulations and benchmarks.
public final class ManualWallClock: WallClock {
    private let millis: Locked<Int64>

    public init(millis: Int64) {
        self.millis = Locked(millis)
    }

    public func nowMillis() -> Int64 {
        millis.withLock { $0 }
    }

    /// Moves the clock forward (or backward, with a negative amount).
    public func advance(byMillis delta: Int64) {
        millis.withLock { $0 += delta }
    }

    public func set(millis newValue: Int64) {
        millis.withLock { $0 = newValue }
    }
}

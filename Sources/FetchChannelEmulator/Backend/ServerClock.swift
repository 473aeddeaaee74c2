import DeviceSigning

/// The backend's clock: a base clock plus an adjustable offset, so tests and the demo can put a
/// backend minutes ahead of or behind the device (the control API's `/_emulator/clock`).
final class ServerClock: WallClock {
    private let base: any WallClock
    private let offset: Locked<Int64>

    init(base: any WallClock, offsetMillis: Int64) {
        self.base = base
        self.offset = Locked(offsetMillis)
    }

    func nowMillis() -> Int64 {
        let (sum, overflow) = base.nowMillis().addingReportingOverflow(offsetMillis)
        return overflow ? (offsetMillis > 0 ? .max : .min) : sum
    }

    var offsetMillis: Int64 {
        get { offset.withLock { $0 } }
        set { offset.withLock { $0 = newValue } }
    }
}

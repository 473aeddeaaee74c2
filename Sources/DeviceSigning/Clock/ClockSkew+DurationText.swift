extension ClockSkew {
    /// Durations for people: "850 ms", "45 s", "60 s", "7 min 12 s", "2 h 5 s", "3 d 4 h".
    ///
    /// Below one second: milliseconds. Otherwise rounded to the nearest second; up to 60 s as
    /// seconds only (so a one-minute tolerance reads "60 s"), above that in d/h/min/s with zero
    /// parts left out. Days appear because a clock with a dead battery can be years off.
    enum DurationText {
        static func text(forMagnitude millis: UInt64) -> String {
            if millis < 1_000 { return "\(millis) ms" }
            let seconds = millis / 1_000 + (millis % 1_000 >= 500 ? 1 : 0)
            if seconds <= 60 { return "\(seconds) s" }
            let parts: [(UInt64, String)] = [
                (seconds / 86_400, "d"),
                (seconds % 86_400 / 3_600, "h"),
                (seconds % 3_600 / 60, "min"),
                (seconds % 60, "s"),
            ]
            return parts.filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }.joined(separator: " ")
        }
    }
}

import Glibc

/// The RFC 9110 §5.6.7 IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) for the `Date` header.
///
/// Written by hand rather than with `DateFormatter` so that it never depends on a locale or time zone,
/// and so that clients measuring clock skew from `Date` get exactly the injected clock.
public enum HTTPServerDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The system's real-time clock in milliseconds since the Unix epoch (the default server clock).
    @Sendable
    public static func systemMillis() -> Int64 {
        var now = timespec()
        guard clock_gettime(CLOCK_REALTIME, &now) == 0 else {
            // CLOCK_REALTIME cannot fail on Linux; fall back to whole seconds if it ever does.
            return Int64(time(nil)) * 1000
        }
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Formats milliseconds since the Unix epoch (sub-second part truncated toward the past).
    /// Years are clamped to 0000...9999 because the format has exactly four year digits.
    public static func imfFixdate(epochMillis: Int64) -> String {
        let minSeconds: Int64 = -62_167_219_200   // 0000-01-01T00:00:00Z
        let maxSeconds: Int64 = 253_402_300_799   // 9999-12-31T23:59:59Z
        let seconds = min(max(floorDivide(epochMillis, 1000), minSeconds), maxSeconds)
        let days = floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let weekday = Int(floorModulo(days + 4, 7))   // 1970-01-01 was a Thursday
        let (year, month, day) = civilDate(daysSinceEpoch: days)

        var text = weekdays[weekday]
        text += ", "
        text += padded(day, 2)
        text += " "
        text += months[month - 1]
        text += " "
        text += padded(year, 4)
        text += " "
        text += padded(Int(secondOfDay / 3600), 2)
        text += ":"
        text += padded(Int(secondOfDay / 60 % 60), 2)
        text += ":"
        text += padded(Int(secondOfDay % 60), 2)
        text += " GMT"
        return text
    }

    /// Proleptic Gregorian (year, month 1–12, day 1–31) from days since 1970-01-01; H. Hinnant's
    /// `civil_from_days`, exact for the whole clamped range.
    static func civilDate(daysSinceEpoch: Int64) -> (year: Int, month: Int, day: Int) {
        let shifted = daysSinceEpoch + 719_468
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    private static func floorModulo(_ value: Int64, _ divisor: Int64) -> Int64 {
        value - floorDivide(value, divisor) * divisor
    }

    private static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

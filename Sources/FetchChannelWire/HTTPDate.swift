import DeviceSigning

/// RFC 9110 §5.6.7 HTTP-date: parsing all three formats, formatting the preferred one.
///
/// Hand-written rather than `DateFormatter`, which is slow, locale-dependent and lenient. The
/// parser is strict because its only job here is to feed clock-skew estimates: a header it is
/// unsure about is better ignored (nil) than turned into a wrong offset.
///
/// What is accepted:
/// - IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, obsolete RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`
///   and asctime `Sun Nov  6 08:49:37 1994` (day `06` or ` 6`), exactly as in the grammar:
///   case-sensitive names, single spaces, fixed digit counts;
/// - leading and trailing spaces or tabs (the optional whitespace around a field value);
/// - second `60` only at 23:59 (where a leap second can occur), read as 59, because Unix time has
///   no leap seconds and a clock that shows one is reading 23:59:59 as far as Unix time goes.
///
/// What is rejected (nil): input longer than ``maximumInputLength`` bytes (before any other work),
/// unknown day or month names, out-of-range fields, a day that does not exist in that month and year,
/// a day name that does not match the date's actual weekday (only a hand-made or corrupted header has
/// one, and such a header should not steer the clock estimate), and a year outside 0000–9999.
public enum HTTPDate {
    /// Longest accepted input; the longest valid form (RFC 850 with "Wednesday") is 33 bytes.
    public static let maximumInputLength = 64

    /// Parses an HTTP-date into milliseconds since the Unix epoch (always a whole second).
    ///
    /// A two-digit RFC 850 year is resolved against the system clock (see
    /// ``parseMillis(_:nowMillis:)``); the other formats do not read the clock at all.
    public static func parseMillis(_ text: String) -> Int64? {
        parse(text) { SystemWallClock().nowMillis() }
    }

    /// Parses an HTTP-date, resolving a two-digit RFC 850 year against `nowMillis`.
    ///
    /// RFC 9110: a date that "appears to be more than 50 years in the future" is in the most recent
    /// past year with the same last two digits. "50 years in the future" is the same calendar instant
    /// 50 years after `nowMillis`; a date exactly there still counts as future, one second later does not.
    /// Pass the time the answer was received, as ``ClockSkewSample`` does.
    public static func parseMillis(_ text: String, nowMillis: Int64) -> Int64? {
        parse(text) { nowMillis }
    }

    /// Formats as IMF-fixdate, the form every sender must generate (for the emulator's `Date`).
    ///
    /// Sub-second precision is dropped (rounded down). Instants outside years 0000–9999, which the
    /// format's four-digit year cannot express, are clamped to the nearest representable second.
    public static func format(millis: Int64) -> String {
        let clamped = min(max(millis, minimumMillis), maximumMillis)
        let seconds = Civil.floorDiv(clamped, 1000)
        let days = Civil.floorDiv(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let date = Civil.date(days: days)

        var out: [UInt8] = []
        out.reserveCapacity(29)
        out.append(contentsOf: shortDayNames[Civil.weekday(days: days)])
        out.append(comma)
        out.append(space)
        appendDigits(date.day, count: 2, to: &out)
        out.append(space)
        out.append(contentsOf: monthNames[Int(date.month) - 1])
        out.append(space)
        appendDigits(date.year, count: 4, to: &out)
        out.append(space)
        appendDigits(secondOfDay / 3600, count: 2, to: &out)
        out.append(colon)
        appendDigits(secondOfDay / 60 % 60, count: 2, to: &out)
        out.append(colon)
        appendDigits(secondOfDay % 60, count: 2, to: &out)
        out.append(space)
        out.append(contentsOf: gmt)
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - Limits and names

    /// 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z: what a four-digit year can express.
    static let minimumMillis: Int64 = Civil.days(year: 0, month: 1, day: 1) * Civil.millisPerDay
    static let maximumMillis: Int64 = Civil.days(year: 10_000, month: 1, day: 1) * Civil.millisPerDay - 1

    private static let shortDayNames: [[UInt8]] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].map {
        Array($0.utf8)
    }
    private static let longDayNames: [[UInt8]] = [
        "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
    ].map { Array($0.utf8) }
    private static let monthNames: [[UInt8]] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ].map { Array($0.utf8) }
    private static let gmt: [UInt8] = Array("GMT".utf8)

    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")
    private static let colon = UInt8(ascii: ":")
    private static let comma = UInt8(ascii: ",")
    private static let hyphen = UInt8(ascii: "-")

    // MARK: - Parsing

    /// The fields as written, before the calendar checks.
    private struct Fields {
        var weekday: Int
        var year: Int64
        var month: Int64
        var day: Int64
        var hour: Int64
        var minute: Int64
        var second: Int64
    }

    /// `now` is only called for an RFC 850 date, so the other formats never read a clock.
    private static func parse(_ text: String, now: () -> Int64) -> Int64? {
        let utf8 = text.utf8
        guard utf8.count <= maximumInputLength else { return nil }
        var bytes = Array(utf8)[...]
        while let first = bytes.first, first == space || first == tab { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == space || last == tab { bytes = bytes.dropLast() }

        var cursor = Cursor(bytes: bytes)
        let name = cursor.letters()
        if let weekday = shortDayNames.firstIndex(where: { $0.elementsEqual(name) }) {
            if cursor.peek() == comma {
                return parseIMFFixdate(&cursor, weekday: weekday)
            }
            return parseAsctime(&cursor, weekday: weekday)
        }
        if let weekday = longDayNames.firstIndex(where: { $0.elementsEqual(name) }) {
            return parseRFC850(&cursor, weekday: weekday, now: now)
        }
        return nil
    }

    /// `, DD Mon YYYY hh:mm:ss GMT`
    private static func parseIMFFixdate(_ c: inout Cursor, weekday: Int) -> Int64? {
        parseCommaDate(&c, weekday: weekday, separator: space, yearDigits: 4).flatMap { validated($0) }
    }

    /// `, DD<separator>Mon<separator>Y… hh:mm:ss GMT`: the shape IMF-fixdate (spaces, four-digit
    /// year) and RFC 850 (hyphens, two-digit year) share. The year is as written.
    private static func parseCommaDate(_ c: inout Cursor, weekday: Int, separator: UInt8, yearDigits: Int) -> Fields? {
        guard c.expect(comma), c.expect(space),
            let day = c.digits(2), c.expect(separator),
            let month = c.month(), c.expect(separator),
            let year = c.digits(yearDigits), c.expect(space),
            let time = c.timeOfDay(), c.expect(space),
            c.expect(gmt), c.isAtEnd
        else { return nil }
        return Fields(
            weekday: weekday, year: year, month: month, day: day,
            hour: time.hour, minute: time.minute, second: time.second)
    }

    /// ` Mon DD hh:mm:ss YYYY` where DD is two digits or a space and one digit.
    private static func parseAsctime(_ c: inout Cursor, weekday: Int) -> Int64? {
        guard c.expect(space), let month = c.month(), c.expect(space) else { return nil }
        let day: Int64
        if c.expect(space) {
            guard let digit = c.digits(1) else { return nil }
            day = digit
        } else {
            guard let digits = c.digits(2) else { return nil }
            day = digits
        }
        guard c.expect(space),
            let time = c.timeOfDay(), c.expect(space),
            let year = c.digits(4), c.isAtEnd
        else { return nil }
        return validated(
            Fields(
                weekday: weekday, year: year, month: month, day: day,
                hour: time.hour, minute: time.minute, second: time.second))
    }

    /// `, DD-Mon-YY hh:mm:ss GMT`
    private static func parseRFC850(_ c: inout Cursor, weekday: Int, now: () -> Int64) -> Int64? {
        guard var fields = parseCommaDate(&c, weekday: weekday, separator: hyphen, yearDigits: 2) else { return nil }
        fields.year = resolveTwoDigitYear(fields.year, fields: fields, nowMillis: now())
        return validated(fields)
    }

    /// RFC 9110's rule: the latest year ending in `twoDigitYear` that is not more than 50 years ahead.
    private static func resolveTwoDigitYear(_ twoDigitYear: Int64, fields: Fields, nowMillis: Int64) -> Int64 {
        // Clamping keeps every product below far from overflow; such a `now` is nonsense anyway.
        let now = min(max(nowMillis, minimumMillis), maximumMillis)
        let nowDays = Civil.floorDiv(now, Civil.millisPerDay)
        let nowMillisOfDay = now - nowDays * Civil.millisPerDay
        let nowDate = Civil.date(days: nowDays)
        // The same calendar instant 50 years on (29 February rolls over to 1 March, as in `days`).
        let limit =
            Civil.days(year: nowDate.year + 50, month: nowDate.month, day: nowDate.day)
            * Civil.millisPerDay + nowMillisOfDay
        let base = nowDate.year - Civil.floorMod(nowDate.year, 100) + twoDigitYear
        for year in [base + 100, base] {
            var candidate = fields
            candidate.year = year
            candidate.second = min(candidate.second, 59)  // a leap second reads as :59 (see `validated`)
            if instantMillis(candidate) <= limit { return year }
        }
        return base - 100  // at least 50 years in the past: never in the future
    }

    /// Range and calendar checks, then the instant; nil when any check fails.
    ///
    /// The year check only matters for an RFC 850 year resolved against an absurd `now`: every
    /// accepted date has a four-digit year, so ``format(millis:)`` renders it back unchanged.
    private static func validated(_ fields: Fields) -> Int64? {
        var f = fields
        guard (0...9_999).contains(f.year), (1...12).contains(f.month),
            f.day >= 1, f.day <= Civil.daysInMonth(year: f.year, month: f.month),
            (0...23).contains(f.hour), (0...59).contains(f.minute)
        else { return nil }
        switch f.second {
        case 0...59: break
        case 60 where f.hour == 23 && f.minute == 59: f.second = 59
        default: return nil
        }
        let days = Civil.days(year: f.year, month: f.month, day: f.day)
        guard Civil.weekday(days: days) == f.weekday else { return nil }
        return instantMillis(f)
    }

    /// No validation: callers check ranges first (or only compare the result).
    private static func instantMillis(_ f: Fields) -> Int64 {
        let days = Civil.days(year: f.year, month: f.month, day: f.day)
        return days * Civil.millisPerDay + ((f.hour * 60 + f.minute) * 60 + f.second) * 1000
    }

    /// The last `count` decimal digits of a non-negative `value`, zero-padded.
    private static func appendDigits(_ value: Int64, count: Int, to out: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<count { divisor *= 10 }
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    /// A forward-only reader over the (already length-bounded) input bytes.
    private struct Cursor {
        let bytes: ArraySlice<UInt8>
        var index: ArraySlice<UInt8>.Index

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            self.index = bytes.startIndex
        }

        var isAtEnd: Bool { index == bytes.endIndex }

        func peek() -> UInt8? {
            isAtEnd ? nil : bytes[index]
        }

        mutating func expect(_ byte: UInt8) -> Bool {
            guard peek() == byte else { return false }
            index += 1
            return true
        }

        mutating func expect(_ literal: [UInt8]) -> Bool {
            for byte in literal where !expect(byte) { return false }
            return true
        }

        /// The longest run of ASCII letters, at most 9 (the length of "Wednesday").
        mutating func letters() -> ArraySlice<UInt8> {
            let start = index
            while let byte = peek(), index - start < 9,
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            {
                index += 1
            }
            return bytes[start..<index]
        }

        /// Exactly `count` ASCII digits.
        mutating func digits(_ count: Int) -> Int64? {
            var value: Int64 = 0
            for _ in 0..<count {
                guard let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                index += 1
            }
            return value
        }

        /// A three-letter month name, as 1…12.
        mutating func month() -> Int64? {
            guard bytes.endIndex - index >= 3 else { return nil }
            let name = bytes[index..<index + 3]
            guard let position = HTTPDate.monthNames.firstIndex(where: { $0.elementsEqual(name) }) else { return nil }
            index += 3
            return Int64(position + 1)
        }

        /// `hh:mm:ss`, unvalidated.
        mutating func timeOfDay() -> (hour: Int64, minute: Int64, second: Int64)? {
            guard let hour = digits(2), expect(HTTPDate.colon),
                let minute = digits(2), expect(HTTPDate.colon),
                let second = digits(2)
            else { return nil }
            return (hour, minute, second)
        }
    }
}

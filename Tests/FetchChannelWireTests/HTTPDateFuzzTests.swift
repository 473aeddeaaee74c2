import Foundation
import Testing

@testable import DeviceSigning
@testable import FetchChannelWire

/// Random and damaged input must give nil or a self-consistent date, never a crash.
///
/// Seeded, so a failure reproduces; the seed is in every failure message.
@Suite struct HTTPDateFuzzTests {
    static let validDates = [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "Wednesday, 29-Feb-84 23:59:60 GMT",
        "Tue Feb 29 12:00:00 2000",
    ]
    static let reference: Int64 = 1_700_000_000_000

    /// Anything accepted must mean exactly what its IMF-fixdate rendering means.
    private func isConsistent(_ text: String, now: Int64 = Self.reference) -> Bool {
        guard let millis = HTTPDate.parseMillis(text, nowMillis: now) else { return true }
        return millis % 1_000 == 0 && HTTPDate.parseMillis(HTTPDate.format(millis: millis)) == millis
    }

    @Test func validDatesParse() {
        for text in Self.validDates {
            #expect(HTTPDate.parseMillis(text, nowMillis: Self.reference) != nil, "\(text)")
        }
    }

    @Test func everyProperPrefixAndSuffixIsRejected() {
        for text in Self.validDates {
            let bytes = Array(text.utf8)
            for cut in 1..<bytes.count {
                let prefix = String(decoding: bytes[..<cut], as: UTF8.self)
                let suffix = String(decoding: bytes[cut...], as: UTF8.self)
                // A prefix ending in spaces trims to a shorter prefix: still not a date.
                #expect(
                    HTTPDate.parseMillis(prefix, nowMillis: Self.reference) == nil, "prefix \(prefix.debugDescription)")
                #expect(
                    HTTPDate.parseMillis(suffix, nowMillis: Self.reference) == nil, "suffix \(suffix.debugDescription)")
            }
        }
    }

    @Test func everySingleByteMutationIsNilOrConsistent() {
        let replacements: [UInt8] = [
            0, 9, 32, 44, 45, 47, 48, 49, 53, 54, 57, 58, 65, 71, 77, 83, 97, 122, 127, 0xC3, 0xFF,
        ]
        var inconsistent: [String] = []
        for text in Self.validDates {
            let bytes = Array(text.utf8)
            for position in bytes.indices {
                for replacement in replacements {
                    var mutated = bytes
                    mutated[position] = replacement
                    let candidate = String(decoding: mutated, as: UTF8.self)
                    if !isConsistent(candidate) { inconsistent.append(candidate) }
                }
                var deleted = bytes
                deleted.remove(at: position)
                let shorter = String(decoding: deleted, as: UTF8.self)
                if !isConsistent(shorter) { inconsistent.append(shorter) }
            }
        }
        #expect(inconsistent.isEmpty, "\(inconsistent.prefix(5))")
    }

    @Test(arguments: [1, 42, 0xC10C])
    func randomBytesAreRejected(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var accepted: [String] = []
        for _ in 0..<20_000 {
            let length = Int(random.next() % 72)
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let text = String(decoding: bytes, as: UTF8.self)
            if HTTPDate.parseMillis(text, nowMillis: Self.reference) != nil { accepted.append(text) }
        }
        // The chance that random bytes form a valid date is far below 1 in 10^20.
        #expect(accepted.isEmpty, "seed \(seed): \(accepted.prefix(3))")
    }

    /// Random field values in and out of range, checked against Foundation's Gregorian calendar,
    /// an implementation independent of ``HTTPDate/Civil``.
    @Test(arguments: [7, 99])
    func randomFieldsAgreeWithFoundationsCalendar(seed: UInt64) throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let dayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        var random = SplitMix64(seed: seed)
        func pick(_ range: ClosedRange<Int>) -> Int {
            range.lowerBound + Int(random.next() % UInt64(range.count))
        }
        var valid = 0
        var disagreements: [String] = []
        for _ in 0..<20_000 {
            // Years around leap-year edges; days and times a little beyond their ranges.
            let year = [1900, 1970, 1999, 2000, 2023, 2024, 2100, 2400][pick(0...7)] + pick(-1...1)
            let month = pick(1...12)
            let day = pick(0...32)
            let hour = pick(0...24)
            let minute = pick(0...60)
            let second = pick(0...59)
            let weekday = pick(0...6)
            let asctime = random.next() % 2 == 0
            let time = "\(pad(hour)):\(pad(minute)):\(pad(second))"
            let text =
                asctime
                ? "\(dayNames[weekday]) \(monthNames[month - 1]) \(pad(day, 2, with: " ")) \(time) \(year)"
                : "\(dayNames[weekday]), \(pad(day)) \(monthNames[month - 1]) \(year) \(time) GMT"

            var expected: Int64?
            let components = DateComponents(
                year: year, month: month, day: day,
                hour: hour, minute: minute, second: second)
            if components.isValidDate(in: calendar), let date = calendar.date(from: components),
                calendar.component(.weekday, from: date) == weekday + 1
            {
                expected = Int64(date.timeIntervalSince1970) * 1_000
            }
            if expected != nil { valid += 1 }
            let actual = HTTPDate.parseMillis(text, nowMillis: Self.reference)
            if actual != expected {
                disagreements.append("\(text): \(String(describing: actual)) vs \(String(describing: expected))")
            }
        }
        #expect(disagreements.isEmpty, "seed \(seed): \(disagreements.prefix(3))")
        #expect(valid > 1_000, "seed \(seed): too few valid dates generated (\(valid)) to test anything")
    }

    private func pad(_ value: Int, _ width: Int = 2, with filler: Character = "0") -> String {
        let digits = String(value)
        return String(repeating: filler, count: max(0, width - digits.count)) + digits
    }

    /// Also: a year resolved against such a `now` never leaves 0000–9999.
    @Test func extremeReferenceTimesDoNotTrap() {
        for now in [Int64.min, -1, 0, Int64.max] {
            for text in Self.validDates {
                #expect(isConsistent(text, now: now), "now \(now): \(text)")
            }
        }
    }
}

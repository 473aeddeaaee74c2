import Testing

@testable import DeviceSigning
@testable import FetchChannelWire

@Suite struct HTTPDateTests {
    /// RFC 9110's example instant, 1994-11-06T08:49:37Z (checked with `date -u`).
    static let rfcExampleMillis: Int64 = 784_111_777_000
    /// 2023-11-14T22:13:20Z.
    static let nov2023Millis: Int64 = 1_700_000_000_000

    // MARK: - The three formats

    @Test func parsesIMFFixdate() {
        #expect(HTTPDate.parseMillis("Sun, 06 Nov 1994 08:49:37 GMT") == Self.rfcExampleMillis)
        #expect(HTTPDate.parseMillis("Tue, 14 Nov 2023 22:13:20 GMT") == Self.nov2023Millis)
        #expect(HTTPDate.parseMillis("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(HTTPDate.parseMillis("Wed, 31 Dec 1969 23:59:59 GMT") == -1_000)
    }

    @Test func parsesRFC850AgainstAReferenceTime() {
        let past = HTTPDate.parseMillis("Sunday, 06-Nov-94 08:49:37 GMT", nowMillis: Self.nov2023Millis)
        #expect(past == Self.rfcExampleMillis)
        #expect(
            HTTPDate.parseMillis("Tuesday, 14-Nov-23 22:13:20 GMT", nowMillis: Self.nov2023Millis) == Self.nov2023Millis
        )
    }

    @Test func parsesRFC850AgainstTheSystemClock() {
        // 1994 is in the past for any plausible system clock (2044 would be within 50 years until 2094).
        #expect(HTTPDate.parseMillis("Sunday, 06-Nov-94 08:49:37 GMT") == Self.rfcExampleMillis)
    }

    @Test func parsesAsctime() {
        #expect(HTTPDate.parseMillis("Sun Nov  6 08:49:37 1994") == Self.rfcExampleMillis)
        #expect(HTTPDate.parseMillis("Sun Nov 06 08:49:37 1994") == Self.rfcExampleMillis)
        #expect(HTTPDate.parseMillis("Tue Nov 14 22:13:20 2023") == Self.nov2023Millis)
    }

    @Test func trimsSurroundingWhitespaceOnly() {
        #expect(HTTPDate.parseMillis("  Sun, 06 Nov 1994 08:49:37 GMT\t") == Self.rfcExampleMillis)
        #expect(HTTPDate.parseMillis("Sun,  06 Nov 1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.parseMillis("Sun, 06 Nov 1994 08:49:37  GMT") == nil)
        #expect(HTTPDate.parseMillis("Sun, 06 Nov 1994 08:49:37 GMT\n") == nil)
    }

    // MARK: - Two-digit years (RFC 9110: more than 50 years ahead means the previous century)

    @Test func twoDigitYearExactlyFiftyYearsAheadStaysInTheFuture() {
        // 2073-11-14T22:13:20Z is exactly 50 calendar years after the reference: not "more than".
        let date = HTTPDate.parseMillis("Tuesday, 14-Nov-73 22:13:20 GMT", nowMillis: Self.nov2023Millis)
        #expect(date == Self.nov2023Millis + Self.daysBetween2023And2073 * 86_400_000)
    }

    @Test func twoDigitYearOneSecondBeyondFiftyYearsGoesToThePast() {
        // 1973-11-14 was a Wednesday, so the day name must change with the century.
        let past = HTTPDate.parseMillis("Wednesday, 14-Nov-73 22:13:21 GMT", nowMillis: Self.nov2023Millis)
        #expect(past == 122_163_201_000)  // `date -u -d '1973-11-14 22:13:21' +%s`
        // The same text as 2073 would need "Tuesday"; with it the date is 1973, where Tuesday is wrong.
        #expect(HTTPDate.parseMillis("Tuesday, 14-Nov-73 22:13:21 GMT", nowMillis: Self.nov2023Millis) == nil)
    }

    @Test func twoDigitYearCanMeanTheNextCentury() {
        // Reference 2080-01-01: year 05 is 2105 (25 years ahead), year 40 is 2040 (2140 is 60 ahead).
        let reference = HTTPDate.Civil.days(year: 2080, month: 1, day: 1) * 86_400_000
        let twentyOneOFive = HTTPDate.parseMillis("Thursday, 01-Jan-05 00:00:00 GMT", nowMillis: reference)
        #expect(twentyOneOFive == HTTPDate.Civil.days(year: 2105, month: 1, day: 1) * 86_400_000)
        let twentyForty = HTTPDate.parseMillis("Sunday, 01-Jan-40 00:00:00 GMT", nowMillis: reference)
        #expect(twentyForty == HTTPDate.Civil.days(year: 2040, month: 1, day: 1) * 86_400_000)
    }

    @Test func twoDigitYearLeapDayDependsOnTheCentury() {
        // 29-Feb-00 exists in 2000 (leap) but not in 1900; the reference decides which it is.
        let in2023 = HTTPDate.parseMillis("Tuesday, 29-Feb-00 12:00:00 GMT", nowMillis: Self.nov2023Millis)
        #expect(in2023 == 951_825_600_000)  // `date -u -d '2000-02-29 12:00' +%s`
        // Seen from 1940, 2000 is 60 years ahead, so "00" is 1900, which had no 29 February.
        let in1940 = HTTPDate.Civil.days(year: 1940, month: 1, day: 1) * 86_400_000
        #expect(HTTPDate.parseMillis("Tuesday, 29-Feb-00 12:00:00 GMT", nowMillis: in1940) == nil)
        // Seen from 1960, 2000 is only 40 years ahead: it stays 2000.
        let in1960 = HTTPDate.Civil.days(year: 1960, month: 1, day: 1) * 86_400_000
        #expect(HTTPDate.parseMillis("Tuesday, 29-Feb-00 12:00:00 GMT", nowMillis: in1960) == 951_825_600_000)
    }

    /// 2023-11-14 to 2073-11-14: 50 × 365 days plus the 13 leap days 2024, 2028, …, 2072
    /// (`date -u -d '2073-11-14 22:13:20' +%s` = 3277923200).
    static let daysBetween2023And2073: Int64 = 50 * 365 + 13

    // MARK: - Calendar validation

    @Test func leapYears() {
        #expect(HTTPDate.parseMillis("Tue, 29 Feb 2000 00:00:00 GMT") == 951_782_400_000)
        #expect(HTTPDate.parseMillis("Thu, 29 Feb 2024 00:00:00 GMT") == 1_709_164_800_000)
        #expect(HTTPDate.parseMillis("Thu, 29 Feb 1900 00:00:00 GMT") == nil)  // 1900: divisible by 100, not 400
        #expect(HTTPDate.parseMillis("Wed, 29 Feb 2023 00:00:00 GMT") == nil)
        #expect(HTTPDate.parseMillis("Thu Feb 29 00:00:00 2024") == 1_709_164_800_000)
        #expect(HTTPDate.parseMillis("Wed Feb 29 00:00:00 2023") == nil)
    }

    @Test func rejectsDaysThatDoNotExist() {
        #expect(HTTPDate.parseMillis("Sat, 31 Apr 2023 00:00:00 GMT") == nil)
        #expect(HTTPDate.parseMillis("Sat, 31 Jun 2023 00:00:00 GMT") == nil)
        #expect(HTTPDate.parseMillis("Sun, 00 Jan 2023 00:00:00 GMT") == nil)
        #expect(HTTPDate.parseMillis("Wed, 32 Jan 2023 00:00:00 GMT") == nil)
        #expect(HTTPDate.parseMillis("Sun Jan  0 00:00:00 2023") == nil)
        #expect(HTTPDate.parseMillis("Sun, 30 Apr 2023 00:00:00 GMT") == 1_682_812_800_000)
    }

    @Test func rejectsOutOfRangeTimes() {
        #expect(HTTPDate.parseMillis("Tue, 14 Nov 2023 24:00:00 GMT") == nil)
        #expect(HTTPDate.parseMillis("Tue, 14 Nov 2023 23:60:00 GMT") == nil)
        #expect(HTTPDate.parseMillis("Tue, 14 Nov 2023 22:13:61 GMT") == nil)
        #expect(HTTPDate.parseMillis("Tue, 14 Nov 2023 23:59:59 GMT") == 1_700_006_399_000)
    }

    @Test func leapSecondOnlyAtTheEndOfADayAndReadAs59() {
        #expect(HTTPDate.parseMillis("Sat, 31 Dec 2016 23:59:60 GMT") == 1_483_228_799_000)
        #expect(HTTPDate.parseMillis("Sat, 31 Dec 2016 23:59:59 GMT") == 1_483_228_799_000)
        #expect(HTTPDate.parseMillis("Sat, 31 Dec 2016 12:34:60 GMT") == nil)
    }

    @Test func rejectsAWeekdayThatDoesNotMatchTheDate() {
        #expect(HTTPDate.parseMillis("Mon, 06 Nov 1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.parseMillis("Monday, 06-Nov-94 08:49:37 GMT", nowMillis: Self.nov2023Millis) == nil)
        #expect(HTTPDate.parseMillis("Mon Nov  6 08:49:37 1994") == nil)
    }

    // MARK: - Syntax

    @Test(arguments: [
        "",
        "GMT",
        "sun, 06 Nov 1994 08:49:37 GMT",  // names are case-sensitive
        "Sun, 06 nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 gmt",
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Nov 1994 08:49:37 +0000",
        "Sun, 6 Nov 1994 08:49:37 GMT",  // IMF day is two digits
        "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 06 Nov 1994 8:49:37 GMT",
        "Sun, 06 Nov 1994 08:49 GMT",
        "Sun, 06-Nov-1994 08:49:37 GMT",
        "Sunday, 06 Nov 1994 08:49:37 GMT",  // long name with the IMF layout
        "Sun, 06-Nov-94 08:49:37 GMT",  // short name with the RFC 850 layout
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37",
        "Sun Nov 6 08:49:37 1994",  // asctime day needs a padding space
        "Sun Nov   6 08:49:37 1994",
        "Sun Nov  6 08:49:37 94",
        "Sun Nov  6 08:49:37 1994 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT trailing",
        "Sun, 06 Nov 1994 08:49:37 GMTX",
        "Sun, 06 Nov 1994 08:49:37 GM",
        "Sun, 0x Nov 1994 08:49:37 GMT",
        "Sun, +6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov -994 08:49:37 GMT",
        "Sun, ０６ Nov 1994 08:49:37 GMT",  // full-width digits are not DIGIT
        "Sun\u{0}, 06 Nov 1994 08:49:37 GMT",
        "Sunday​, 06-Nov-94 08:49:37 GMT",  // a zero-width space after the name
        "1994-11-06T08:49:37Z",
        "784111777",
    ])
    func rejectsMalformedSyntax(text: String) {
        #expect(HTTPDate.parseMillis(text, nowMillis: Self.nov2023Millis) == nil, "\(text.debugDescription)")
    }

    @Test func rejectsInputLongerThanTheLimitBeforeTrimming() {
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        let padded = date + String(repeating: " ", count: HTTPDate.maximumInputLength - date.utf8.count)
        #expect(HTTPDate.parseMillis(padded) == Self.rfcExampleMillis)
        #expect(HTTPDate.parseMillis(padded + " ") == nil)
        #expect(HTTPDate.parseMillis(String(repeating: "Sun, ", count: 100_000)) == nil)
    }

    // MARK: - Formatting

    @Test func formatsIMFFixdate() {
        #expect(HTTPDate.format(millis: Self.rfcExampleMillis) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(millis: Self.rfcExampleMillis + 999) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(millis: Self.nov2023Millis) == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(HTTPDate.format(millis: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(millis: -1) == "Wed, 31 Dec 1969 23:59:59 GMT")
        #expect(HTTPDate.format(millis: 951_782_400_000) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }

    @Test func formatClampsToFourDigitYears() {
        #expect(HTTPDate.format(millis: .max) == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate.format(millis: .min) == "Sat, 01 Jan 0000 00:00:00 GMT")
    }

    @Test func formatThenParseRoundTripsEveryDayOfFourHundredYears() {
        // One Gregorian cycle covers every calendar case; the time of day varies with the day.
        let start = HTTPDate.Civil.days(year: 1900, month: 1, day: 1)
        var failures: [Int64] = []
        for day in start..<(start + 146_097) {
            let millis = day * 86_400_000 + (day * 7_919 % 86_400) * 1_000
            if HTTPDate.parseMillis(HTTPDate.format(millis: millis)) != millis { failures.append(millis) }
        }
        #expect(failures.isEmpty, "first failures: \(failures.prefix(5))")
    }

    // MARK: - Civil calendar

    @Test func civilConversionMatchesKnownDays() {
        #expect(HTTPDate.Civil.days(year: 1970, month: 1, day: 1) == 0)
        #expect(HTTPDate.Civil.days(year: 2000, month: 3, day: 1) == 11_017)
        #expect(HTTPDate.Civil.days(year: 1969, month: 12, day: 31) == -1)
        #expect(HTTPDate.Civil.days(year: 0, month: 1, day: 1) == -719_528)
        #expect(HTTPDate.Civil.date(days: -719_528) == (0, 1, 1))
        #expect(HTTPDate.Civil.date(days: 19_675) == (2023, 11, 14))
        #expect(HTTPDate.Civil.weekday(days: 0) == 4)  // Thursday
        #expect(HTTPDate.Civil.weekday(days: -1) == 3)
    }
}

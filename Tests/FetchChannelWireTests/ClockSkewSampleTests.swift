import Testing

@testable import DeviceSigning
@testable import FetchChannelWire

@Suite struct ClockSkewSampleTests {
    /// Tue, 14 Nov 2023 22:13:20 GMT.
    static let serverMillis: Int64 = 1_700_000_000_000
    static let date = "Tue, 14 Nov 2023 22:13:20 GMT"

    @Test func offsetIsServerDatePlusHalfASecondMinusTheMidpoint() throws {
        // Sent 1 s before and received 1 s after the server's second began: midpoint = server time.
        let sample = try #require(
            ClockSkewSample.from(
                dateHeader: Self.date, ageHeader: nil,
                sentAtMillis: Self.serverMillis - 1_000, receivedAtMillis: Self.serverMillis + 1_000))
        #expect(sample.offsetMillis == 500)
        #expect(sample.roundTripMillis == 2_000)
    }

    @Test func deviceBehindGivesAPositiveOffset() throws {
        let sample = try #require(
            ClockSkewSample.from(
                dateHeader: Self.date, ageHeader: nil,
                sentAtMillis: Self.serverMillis - 60_000, receivedAtMillis: Self.serverMillis - 60_000))
        #expect(sample.offsetMillis == 60_500)
    }

    @Test func deviceAheadGivesANegativeOffset() throws {
        let sample = try #require(
            ClockSkewSample.from(
                dateHeader: Self.date, ageHeader: nil,
                sentAtMillis: Self.serverMillis + 10_000, receivedAtMillis: Self.serverMillis + 10_300))
        #expect(sample.offsetMillis == 500 - 10_150)
    }

    @Test func oddRoundTripMidpointRoundsDown() throws {
        let sample = try #require(
            ClockSkewSample.from(
                dateHeader: Self.date, ageHeader: nil,
                sentAtMillis: Self.serverMillis, receivedAtMillis: Self.serverMillis + 3))
        #expect(sample.offsetMillis == 499)  // midpoint = sent + 1
    }

    @Test func everyDateFormatGivesTheSameSample() {
        let formats = [Self.date, "Tuesday, 14-Nov-23 22:13:20 GMT", "Tue Nov 14 22:13:20 2023"]
        let offsets = formats.map {
            ClockSkewSample.from(
                dateHeader: $0, ageHeader: nil,
                sentAtMillis: Self.serverMillis, receivedAtMillis: Self.serverMillis)?.offsetMillis
        }
        #expect(offsets == [500, 500, 500])
    }

    @Test func rfc850YearIsResolvedAgainstTheReceiveTime() throws {
        // Received in 1999: "05" is 2005 (6 years ahead), not 1905.
        let received: Int64 = 915_148_800_000  // 1999-01-01T00:00:00Z
        let sample = try #require(
            ClockSkewSample.from(
                dateHeader: "Saturday, 01-Jan-05 00:00:00 GMT", ageHeader: nil,
                sentAtMillis: received, receivedAtMillis: received))
        #expect(sample.offsetMillis == 1_104_537_600_000 + 500 - received)  // 2005-01-01T00:00:00Z
    }

    @Test(arguments: ["0", "120", "", "garbage"])
    func anyAgeHeaderMeansNoSample(age: String) {
        #expect(
            ClockSkewSample.from(
                dateHeader: Self.date, ageHeader: age,
                sentAtMillis: Self.serverMillis, receivedAtMillis: Self.serverMillis) == nil)
    }

    @Test func missingOrInvalidDateMeansNoSample() {
        for header in [nil, "", "yesterday", "Tue, 14 Nov 2023 22:13:20 UTC", "Mon, 14 Nov 2023 22:13:20 GMT"] {
            #expect(
                ClockSkewSample.from(
                    dateHeader: header, ageHeader: nil,
                    sentAtMillis: Self.serverMillis, receivedAtMillis: Self.serverMillis) == nil,
                "\(String(describing: header))")
        }
    }

    @Test func receivedBeforeSentMeansNoSample() {
        #expect(
            ClockSkewSample.from(
                dateHeader: Self.date, ageHeader: nil,
                sentAtMillis: Self.serverMillis + 1, receivedAtMillis: Self.serverMillis) == nil)
        #expect(
            ClockSkewSample.from(
                dateHeader: Self.date, ageHeader: nil,
                sentAtMillis: Self.serverMillis, receivedAtMillis: Self.serverMillis) != nil)
    }

    @Test func extremeTimesGiveNoSampleInsteadOfTrapping() {
        let cases: [(Int64, Int64)] = [(.min, .max), (.min, .min), (.max, .max), (.min, 0), (-1, .max)]
        for (sent, received) in cases {
            let sample = ClockSkewSample.from(
                dateHeader: Self.date, ageHeader: nil,
                sentAtMillis: sent, receivedAtMillis: received)
            // Whatever comes back must be the exact formula, never a wrapped-around value.
            if let sample {
                let midpoint = sent + (received - sent) / 2
                #expect(sample.offsetMillis == Self.serverMillis + 500 - midpoint, "\(sent) \(received)")
            }
        }
        // The round trip overflows; the offset overflows.
        #expect(
            ClockSkewSample.from(
                dateHeader: Self.date, ageHeader: nil,
                sentAtMillis: .min, receivedAtMillis: .max) == nil)
        #expect(
            ClockSkewSample.from(
                dateHeader: Self.date, ageHeader: nil,
                sentAtMillis: .min, receivedAtMillis: .min) == nil)
    }
}

import Testing

@testable import DeviceSigning

@Suite struct ClockSkewMessageTests {
    private func message(_ offset: Int64?, tolerance: Int64 = 60_000) -> String {
        ClockSkew(server: "https://backend.example", measuredOffsetMillis: offset, toleranceMillis: tolerance).message
    }

    @Test func deviceAheadWhenTheServerIsBehind() {
        #expect(
            message(-432_000) == "The device clock is 7 min 12 s ahead of https://backend.example (allowed: 60 s). "
                + "Set the clock automatically and try again.")
    }

    @Test func deviceBehindWhenTheServerIsAhead() {
        #expect(
            message(432_000) == "The device clock is 7 min 12 s behind https://backend.example (allowed: 60 s). "
                + "Set the clock automatically and try again.")
    }

    @Test func unknownOffsetSaysTheTimeWasRejected() {
        let expected =
            "The backend https://backend.example rejected the request's time: the device clock differs "
            + "from the server's by more than the allowed 60 s. Set the clock automatically and try again."
        #expect(message(nil) == expected)
        // No direction to report, and not clearly within a tolerance under the estimate's margin.
        #expect(message(0, tolerance: 500) == expected.replacingOccurrences(of: "60 s", with: "500 ms"))
    }

    @Test func sizesReadLikeAPersonWouldSayThem() {
        let cases: [(Int64, String)] = [
            (1, "1 ms"), (999, "999 ms"), (1_000, "1 s"), (1_499, "1 s"), (1_500, "2 s"),
            (59_600, "60 s"), (60_000, "60 s"), (60_499, "60 s"), (60_500, "1 min 1 s"), (120_000, "2 min"),
            (3_600_000, "1 h"), (3_605_000, "1 h 5 s"), (7_384_000, "2 h 3 min 4 s"),
            (86_400_000, "1 d"), (31_536_000_000, "365 d"), (97_445_000, "1 d 3 h 4 min 5 s"),
        ]
        for (millis, text) in cases {
            #expect(ClockSkew.DurationText.text(forMagnitude: UInt64(millis)) == text, "\(millis)")
        }
        #expect(ClockSkew.DurationText.text(forMagnitude: Int64.min.magnitude).hasSuffix(" s"))
    }

    @Test func toleranceUsesTheSameWording() {
        #expect(
            message(-900_000, tolerance: 300_000).contains("15 min ahead of https://backend.example (allowed: 5 min)"))
        #expect(message(3_600, tolerance: 1_500).contains("4 s behind https://backend.example (allowed: 2 s)"))
        #expect(message(500, tolerance: 0).contains("about 500 ms behind"), "within the margin of a zero tolerance")
        #expect(message(2_500, tolerance: -1).contains("(allowed: 0 ms)"))
    }

    /// The backend's own CLOCK_SKEW_TOO_BIG with a measured difference it allows: it used to say
    /// "Set the clock" about a clock 2 s off.
    @Test func anOffsetWithinTheToleranceDoesNotBlameTheClock() {
        for offset: Int64 in [0, 2_000, -2_000, 59_000] {
            let text = message(offset)
            #expect(!text.contains("Set the clock"), "\(offset): \(text)")
            #expect(text.contains("rejected the request's time, although the device clock"), "\(text)")
            #expect(text.contains("Check the tolerance configured"), "\(text)")
        }
        #expect(message(2_000).contains("is only 2 s behind it (allowed: 60 s)"))
        #expect(message(-2_000).contains("is only 2 s ahead of it"))
        #expect(message(0).contains("although the device clock agrees with it"))
        // Within the estimate's margin of the tolerance (a Date header has whole seconds), the
        // backend's verdict stands.
        for offset: Int64 in [59_001, 60_000, 60_001] {
            #expect(message(offset).contains("Set the clock automatically"), "\(offset)")
        }
        // Not "59 s behind (allowed: 60 s)", which reads as within.
        #expect(message(59_500).contains("about 60 s behind https://backend.example, at the edge of the allowed 60 s"))
        #expect(message(60_001).contains("about 60 s behind https://backend.example, at the edge"))
        #expect(message(61_001).hasPrefix("The device clock is 1 min 1 s behind"), "beyond the margin: no hedging")
        #expect(message(.min).contains("Set the clock automatically"))
    }

    @Test func extremeOffsetsDoNotTrap() {
        #expect(message(.min).contains("ahead of"))
        #expect(message(.max).contains("behind"))
    }
}

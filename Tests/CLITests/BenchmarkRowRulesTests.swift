import Testing

@testable import FetchChannelBenchmarks

/// How a ratio row is judged: on the ratio as printed, rounded toward failing its target, and
/// never met without a baseline.
@Suite struct BenchmarkRowRulesTests {
    @Test func aRatioRowIsJudgedOnTheRatioItPrints() {
        // 9,496 / 10,000 = 0.9496 is below 0.95: printed 0.949 (not 0.950), and not met.
        let below = SigningBenchmarks.ratioRow("r", 9_496, 10_000, unit: "u", target: 0.95)
        #expect(below.ratio == 0.949)
        #expect(!below.met)
        let exactly = SigningBenchmarks.ratioRow("r", 9_500, 10_000, unit: "u", target: 0.95)
        #expect(exactly.ratio == 0.95)
        #expect(exactly.met)
    }

    /// An at-most target rounds up: 1.2504 is printed 1.251 and fails <= 1.25.
    @Test func anAtMostRatioRoundsUp() {
        #expect(Measurement.ratio(1.2504, over: 1, rounding: .up) == 1.251)
        #expect(Measurement.ratio(1.25, over: 1, rounding: .up) == 1.25)
        #expect(Measurement.ratio(1, over: 0, rounding: .up) == nil)
    }

    @Test func aRatioRowWithoutABaselineHasNoRatioAndIsNotMet() {
        let row = SigningBenchmarks.ratioRow("r", 9_000, 0, unit: "u", target: 0.95)
        #expect(row.ratio == nil)
        #expect(!row.met)
    }
}

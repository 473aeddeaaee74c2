import Testing

@testable import FetchChannelBenchmarks

/// How a ratio row is judged: on the ratio as printed, and never met without a baseline.
@Suite struct BenchmarkRowRulesTests {
    @Test func aRatioRowIsJudgedOnTheRatioItPrints() {
        // 9,496 / 10,000 = 0.9496, printed 0.950: met against 0.95, as a reader of the JSON computes.
        let row = SigningBenchmarks.ratioRow("r", 9_496, 10_000, unit: "u", target: 0.95)
        #expect(row.ratio == 0.95)
        #expect(row.met)
        let below = SigningBenchmarks.ratioRow("r", 9_494, 10_000, unit: "u", target: 0.95)
        #expect(below.ratio == 0.949)
        #expect(!below.met)
    }

    @Test func aRatioRowWithoutABaselineHasNoRatioAndIsNotMet() {
        let row = SigningBenchmarks.ratioRow("r", 9_000, 0, unit: "u", target: 0.95)
        #expect(row.ratio == nil)
        #expect(!row.met)
    }
}

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

    /// The ratio is the printed value over the printed baseline, and `met` is judged on it: a
    /// reader dividing the two printed numbers reaches the same verdict.
    @Test func aRatioIsThePrintedValueOverThePrintedBaseline() {
        // 949.6 / 1000.4 = 0.9492, but the row prints 950 and 1000: 0.950, met.
        let sign = SigningBenchmarks.ratioRow("r", 949.6, 1000.4, unit: "u", target: 0.95)
        #expect(sign.value == 950 && sign.baseline == 1000)
        #expect(sign.ratio == 0.95)
        #expect(sign.met)

        // 259.6 / 199.6 = 1.3006, but the row prints 260 and 200: 1.300, within <= 1.3.
        let tls = ClientCPUBenchmark.tlsRow(client: 259.6, plainClient: 199.6, unit: "u")
        #expect(tls.value == 260 && tls.baseline == 200)
        #expect(tls.ratio == 1.3)
        #expect(tls.met)
        let over = ClientCPUBenchmark.tlsRow(client: 261, plainClient: 200, unit: "u")
        #expect(over.ratio == 1.305 && !over.met)
        let nothing = ClientCPUBenchmark.tlsRow(client: 0.4, plainClient: 200, unit: "u")
        #expect(nothing.ratio == nil && !nothing.met, "no client CPU left is a count gone wrong")
    }

    /// `fetch-8-backends` prints its wall time to 0.1 ms and judges that: 375.04 ms prints 375.0,
    /// ratio 1.250 (met); 299.96 ms prints 300.0, not faster than the delay (met).
    @Test func theEightBackendsRowIsJudgedOnTheWallTimeItPrints() {
        let atTarget = FetchBenchmarks.eightBackendsRow(wallMillis: 375.04)
        #expect(atTarget.value == 375 && atTarget.baseline == 300)
        #expect(atTarget.ratio == 1.25)
        #expect(atTarget.met)
        let atDelay = FetchBenchmarks.eightBackendsRow(wallMillis: 299.96)
        #expect(atDelay.value == 300 && atDelay.ratio == 1)
        #expect(atDelay.met)
        let early = FetchBenchmarks.eightBackendsRow(wallMillis: 299.94)
        #expect(early.value == 299.9 && !early.met, "faster than the delay: the delay did not happen")
        let late = FetchBenchmarks.eightBackendsRow(wallMillis: 375.06)
        #expect(late.ratio == 1.251 && !late.met)
    }
}

import Testing

@testable import DeviceSigning

@Suite struct ClockSkewEstimatorTests {
    static let server = "https://backend.example"

    private func record(_ offsets: [Int64], in estimator: ClockSkewEstimator, for server: String = Self.server) {
        for offset in offsets { estimator.record(ClockSkewSample(offsetMillis: offset), for: server) }
    }

    @Test func noSamplesNoEstimate() {
        #expect(ClockSkewEstimator().estimatedOffsetMillis(for: Self.server) == nil)
    }

    @Test func medianOfAnOddCountIgnoresOutliers() {
        let estimator = ClockSkewEstimator()
        record([400, 90_000_000, 380, -5_000_000, 420], in: estimator)
        #expect(estimator.estimatedOffsetMillis(for: Self.server) == 400)
    }

    /// One node with a wrong clock among two samples does not make an offset no node has (the
    /// mean, 300 000 here, was beyond the tolerance and called a 401 clock skew).
    @Test func medianOfAnEvenCountIsTheMiddleSampleNearerZero() {
        let estimator = ClockSkewEstimator()
        record([0, 600_000], in: estimator)
        #expect(estimator.estimatedOffsetMillis(for: Self.server) == 0)
        record([600_000, 0], in: estimator)
        #expect(estimator.estimatedOffsetMillis(for: Self.server) == 0, "[0, 0, 600000, 600000]")
        let skewed = ClockSkewEstimator()
        record([600_000, 600_010], in: skewed)
        #expect(skewed.estimatedOffsetMillis(for: Self.server) == 600_000)
        let negative = ClockSkewEstimator()
        record([-1_000, -2_001], in: negative)
        #expect(negative.estimatedOffsetMillis(for: Self.server) == -1_000)
        let tie = ClockSkewEstimator()
        record([5, -5], in: tie)
        #expect(tie.estimatedOffsetMillis(for: Self.server) == -5, "the lower on a tie")
    }

    @Test func medianOfExtremeValuesDoesNotOverflow() {
        let estimator = ClockSkewEstimator()
        record([.max, .max - 1], in: estimator)
        let expected: Int64 = .max - 1
        #expect(estimator.estimatedOffsetMillis(for: Self.server) == expected)
        let mixed = ClockSkewEstimator()
        record([.min, .max], in: mixed)
        #expect(mixed.estimatedOffsetMillis(for: Self.server) == .max, "|Int64.min| is the larger")
    }

    @Test func keepsOnlyTheLastFiveSamples() {
        let estimator = ClockSkewEstimator()
        #expect(estimator.samplesPerServer == 5)
        record([-9_000, -9_000, -9_000, 10, 20], in: estimator)
        #expect(estimator.estimatedOffsetMillis(for: Self.server) == -9_000)
        record([30, 40, 50], in: estimator)  // the three -9000 are now gone
        #expect(estimator.estimatedOffsetMillis(for: Self.server) == 30)
        record([60, 70, 80, 90, 100], in: estimator)
        #expect(estimator.estimatedOffsetMillis(for: Self.server) == 80)
    }

    @Test func windowSizeIsConfigurableAndAtLeastOne() {
        let three = ClockSkewEstimator(samplesPerServer: 3)
        record([1, 2, 3, 100, 200], in: three)
        #expect(three.estimatedOffsetMillis(for: Self.server) == 100)
        let one = ClockSkewEstimator(samplesPerServer: 0)
        #expect(one.samplesPerServer == 1)
        record([1, 2, 3], in: one)
        #expect(one.estimatedOffsetMillis(for: Self.server) == 3)
    }

    @Test func serversAreKeptApart() {
        let estimator = ClockSkewEstimator()
        record([1_000], in: estimator, for: "https://a.example")
        record([-2_000], in: estimator, for: "https://b.example")
        #expect(estimator.estimatedOffsetMillis(for: "https://a.example") == 1_000)
        #expect(estimator.estimatedOffsetMillis(for: "https://b.example") == -2_000)
        #expect(estimator.estimatedOffsetMillis(for: "https://c.example") == nil)
    }

    @Test func resetForgetsOneServer() {
        let estimator = ClockSkewEstimator()
        record([1_000], in: estimator, for: "https://a.example")
        record([2_000], in: estimator, for: "https://b.example")
        estimator.reset(server: "https://a.example")
        #expect(estimator.estimatedOffsetMillis(for: "https://a.example") == nil)
        #expect(estimator.estimatedOffsetMillis(for: "https://b.example") == 2_000)
        record([3_000], in: estimator, for: "https://a.example")
        #expect(estimator.estimatedOffsetMillis(for: "https://a.example") == 3_000)
        estimator.resetAll()
        #expect(estimator.serverCount == 0)
    }

    @Test func evictsTheLeastRecentlyUpdatedServer() {
        let estimator = ClockSkewEstimator(maximumServers: 3)
        record([1], in: estimator, for: "a")
        record([2], in: estimator, for: "b")
        record([3], in: estimator, for: "c")
        _ = estimator.estimatedOffsetMillis(for: "b")  // reading is not updating
        record([4], in: estimator, for: "a")  // a is now the most recent, b the stalest
        record([5], in: estimator, for: "d")
        #expect(estimator.serverCount == 3)
        #expect(estimator.estimatedOffsetMillis(for: "b") == nil)
        #expect(estimator.estimatedOffsetMillis(for: "a") != nil)
        #expect(estimator.estimatedOffsetMillis(for: "c") == 3)
        #expect(estimator.estimatedOffsetMillis(for: "d") == 5)
    }

    @Test func defaultBoundOnServers() {
        let estimator = ClockSkewEstimator()
        #expect(estimator.maximumServers == 1_024)
        for index in 0..<1_500 { record([Int64(index)], in: estimator, for: "https://\(index).example") }
        #expect(estimator.serverCount == 1_024)
        #expect(estimator.estimatedOffsetMillis(for: "https://475.example") == nil)
        #expect(estimator.estimatedOffsetMillis(for: "https://476.example") == 476)
        #expect(estimator.estimatedOffsetMillis(for: "https://1499.example") == 1_499)
    }

    @Test func concurrentRecordingKeepsEveryServerConsistent() async {
        let estimator = ClockSkewEstimator()
        let servers = (0..<16).map { "https://\($0).example" }
        await withTaskGroup(of: Void.self) { group in
            for (index, server) in servers.enumerated() {
                for _ in 0..<4 {
                    group.addTask {
                        for _ in 0..<1_000 {
                            estimator.record(ClockSkewSample(offsetMillis: Int64(index) * 1_000), for: server)
                            _ = estimator.estimatedOffsetMillis(for: server)
                        }
                    }
                }
            }
            // Readers and resets of other servers racing with the writers.
            group.addTask {
                for round in 0..<2_000 {
                    estimator.record(ClockSkewSample(offsetMillis: -1), for: "https://scratch.example")
                    if round % 3 == 0 { estimator.reset(server: "https://scratch.example") }
                }
            }
        }
        for (index, server) in servers.enumerated() {
            #expect(estimator.estimatedOffsetMillis(for: server) == Int64(index) * 1_000, "\(server)")
        }
        #expect(estimator.serverCount <= servers.count + 1)
    }

    @Test func concurrentNewServersStayWithinTheBound() async {
        let estimator = ClockSkewEstimator(maximumServers: 64)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<1_000 {
                        estimator.record(ClockSkewSample(offsetMillis: Int64(index)), for: "w\(worker)-\(index)")
                    }
                }
            }
        }
        #expect(estimator.serverCount == 64)
    }
}

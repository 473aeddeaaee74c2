import Testing

@testable import DeviceSigning

@Suite struct ClockSkewPolicyTests {
    static let skew = ClockSkew(
        server: "https://backend.example", measuredOffsetMillis: 432_500, toleranceMillis: 60_000)
    static let compensate = ClockSkewPolicy.compensate(maximumOffsetMillis: 3_600_000)

    @Test func defaultIsReport() {
        #expect(ClockSkewPolicy.default == .report)
        #expect(ClockSkewPolicy.defaultRetryThresholdMillis == 1_000)
    }

    @Test func notSkewIsNotSkewUnderEveryPolicy() {
        for policy in [ClockSkewPolicy.report, Self.compensate] {
            let decision = policy.decision(
                for: .notSkew, signedWithOffsetMillis: 0,
                newEstimateMillis: 432_500, isRetry: false)
            #expect(decision == .notSkew)
        }
    }

    @Test func reportNeverRetries() {
        for classification in [ClockSkewClassification.definite(Self.skew), .probable(Self.skew)] {
            for isRetry in [false, true] {
                #expect(
                    ClockSkewPolicy.report.decision(
                        for: classification, signedWithOffsetMillis: 0,
                        newEstimateMillis: 432_500, isRetry: isRetry) == .surface(Self.skew))
            }
        }
    }

    @Test func compensateRetriesOnceWithTheNewEstimate() {
        for classification in [ClockSkewClassification.definite(Self.skew), .probable(Self.skew)] {
            let first = Self.compensate.decision(
                for: classification, signedWithOffsetMillis: 0,
                newEstimateMillis: 430_000, isRetry: false)
            #expect(first == .retry(withOffsetMillis: 430_000))
            #expect(
                Self.compensate.decision(
                    for: classification, signedWithOffsetMillis: 0,
                    newEstimateMillis: 430_000, isRetry: true) == .surface(Self.skew))
        }
    }

    @Test func compensateUsesTheMeasuredOffsetWhenThereIsNoEstimate() {
        #expect(
            Self.compensate.decision(
                for: .definite(Self.skew), signedWithOffsetMillis: 0,
                newEstimateMillis: nil, isRetry: false) == .retry(withOffsetMillis: 432_500))
        let unknown = ClockSkew(server: "https://backend.example", measuredOffsetMillis: nil, toleranceMillis: 60_000)
        #expect(
            Self.compensate.decision(
                for: .definite(unknown), signedWithOffsetMillis: 0,
                newEstimateMillis: nil, isRetry: false) == .surface(unknown))
    }

    /// An estimate that would sign the retry as the failed request was signed (stale: the clock
    /// was set right since its samples) gives way to the backend's measurement of this request.
    @Test func compensateFallsBackToTheMeasurementWhenTheEstimateWouldNotChangeTheSignature() {
        let measured = ClockSkew(server: "https://backend.example", measuredOffsetMillis: 40, toleranceMillis: 60_000)
        #expect(
            Self.compensate.decision(
                for: .definite(measured), signedWithOffsetMillis: 600_000,
                newEstimateMillis: 600_000, isRetry: false) == .retry(withOffsetMillis: 40))
        #expect(
            Self.compensate.decision(
                for: .definite(measured), signedWithOffsetMillis: 600_000,
                newEstimateMillis: 7_200_000, isRetry: false) == .surface(measured),
            "an estimate beyond the maximum is surfaced whatever the measurement")
        #expect(
            Self.compensate.decision(
                for: .definite(measured), signedWithOffsetMillis: 600_000,
                newEstimateMillis: 600_000, isRetry: true) == .surface(measured))
    }

    @Test func compensateNeedsTheOffsetToHaveChangedByMoreThanTheThreshold() {
        func decide(signedWith prior: Int64, threshold: Int64 = 1_000) -> ClockSkewDecision {
            Self.compensate.decision(
                for: .probable(Self.skew), signedWithOffsetMillis: prior,
                newEstimateMillis: 432_500, isRetry: false, thresholdMillis: threshold)
        }
        #expect(decide(signedWith: 432_500) == .surface(Self.skew))
        #expect(decide(signedWith: 431_500) == .surface(Self.skew))
        #expect(decide(signedWith: 433_500) == .surface(Self.skew))
        #expect(decide(signedWith: 431_499) == .retry(withOffsetMillis: 432_500))
        #expect(decide(signedWith: 433_501) == .retry(withOffsetMillis: 432_500))
        #expect(decide(signedWith: 431_499, threshold: 5_000) == .surface(Self.skew))
        #expect(decide(signedWith: 432_499, threshold: 0) == .retry(withOffsetMillis: 432_500))
        #expect(decide(signedWith: .min) == .retry(withOffsetMillis: 432_500))  // change overflows: huge
    }

    @Test func compensateOnlyUpToTheMaximumInEitherDirection() {
        func decide(_ estimate: Int64, maximum: Int64) -> ClockSkewDecision {
            ClockSkewPolicy.compensate(maximumOffsetMillis: maximum).decision(
                for: .probable(Self.skew), signedWithOffsetMillis: 0, newEstimateMillis: estimate, isRetry: false)
        }
        #expect(decide(300_000, maximum: 300_000) == .retry(withOffsetMillis: 300_000))
        #expect(decide(-300_000, maximum: 300_000) == .retry(withOffsetMillis: -300_000))
        #expect(decide(300_001, maximum: 300_000) == .surface(Self.skew))
        #expect(decide(-300_001, maximum: 300_000) == .surface(Self.skew))
        #expect(decide(.min, maximum: .max) == .surface(Self.skew))
        #expect(decide(5_000, maximum: -1) == .surface(Self.skew))
    }
}

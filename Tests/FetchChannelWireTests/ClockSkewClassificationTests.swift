import Foundation
import Testing

@testable import DeviceSigning
@testable import FetchChannelWire

@Suite struct ClockSkewClassificationTests {
    static let server = "https://backend.example"
    static let tolerance: Int64 = 60_000

    private func classify(
        _ status: Int, _ body: String, estimate: Int64?, created: Int64? = nil
    ) -> ClockSkewClassification {
        ClockSkewClassification.classify(
            status: status, body: Array(body.utf8), estimatedOffsetMillis: estimate,
            toleranceMillis: Self.tolerance, server: Self.server, requestCreationMillis: created)
    }

    private func skew(_ measured: Int64?) -> ClockSkew {
        ClockSkew(server: Self.server, measuredOffsetMillis: measured, toleranceMillis: Self.tolerance)
    }

    @Test func backendSaysSoIsDefiniteWithTheMeasuredOffset() {
        let body = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","serverTimeInEpochMillis":1700000000000}"#
        #expect(classify(401, body, estimate: 5_000, created: 1_699_999_000_000) == .definite(skew(1_000_000)))
        #expect(classify(401, body, estimate: 5_000, created: 1_700_000_090_000) == .definite(skew(-90_000)))
    }

    /// An error body that names `errorCode` twice has no code: Foundation kept the first, and a
    /// 401 `INVALID_SIGNATURE` could be read as a clock skew (or the other way round). A time
    /// named twice is no time, and the estimate stands.
    @Test func aBodyWithAMemberTwiceIsNoErrorCode() {
        let body = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","errorCode":"INVALID_SIGNATURE"}"#
        #expect(classify(401, body, estimate: nil) == .notSkew)
        let time = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","serverTimeInEpochMillis":1,"serverTimeInEpochMillis":2}"#
        #expect(classify(401, time, estimate: 7, created: 1_699_999_000_000) == .definite(skew(7)))
    }

    @Test func definiteFallsBackToTheEstimateThenToUnknown() {
        let withTime = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","serverTimeInEpochMillis":1700000000000}"#
        #expect(classify(401, withTime, estimate: 5_000) == .definite(skew(5_000)))  // no creation time
        let withoutTime = #"{"errorCode":"CLOCK_SKEW_TOO_BIG"}"#
        #expect(classify(401, withoutTime, estimate: 5_000, created: 1) == .definite(skew(5_000)))
        #expect(classify(401, withoutTime, estimate: nil) == .definite(skew(nil)))
    }

    @Test func definiteOnAnyErrorStatusButNeverOnSuccess() {
        let body = #"{"errorCode":"CLOCK_SKEW_TOO_BIG"}"#
        for status in [400, 401, 403, 409, 500, 503] {
            #expect(classify(status, body, estimate: 0) == .definite(skew(0)), "\(status)")
        }
        for status in [200, 201, 204, 302, 399] {
            #expect(classify(status, body, estimate: 0) == .notSkew, "\(status)")
        }
    }

    @Test func serverTimeIsReadLeniently() {
        let created: Int64 = 1_699_999_000_000
        let asFloat = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","serverTimeInEpochMillis":1.7E12}"#
        #expect(classify(401, asFloat, estimate: 7, created: created) == .definite(skew(1_000_000)))
        let asString = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","serverTimeInEpochMillis":"1700000000000"}"#
        #expect(classify(401, asString, estimate: 7, created: created) == .definite(skew(7)))
        let fractional = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","serverTimeInEpochMillis":1700000000000.5}"#
        #expect(classify(401, fractional, estimate: 7, created: created) == .definite(skew(7)))
        let extra = #"{"x":[1,{"y":null}],"errorCode":"CLOCK_SKEW_TOO_BIG","message":"too far"}"#
        #expect(classify(401, extra, estimate: 7) == .definite(skew(7)))
    }

    /// The time is judged on its digits, not through a `Double`: a fraction is no time, nor is
    /// a number beyond 64 bits (it used to become `Int64.min`, or the integer below the fraction).
    @Test func aServerTimeThatIsNoExactIntegerFallsBackToTheEstimate() {
        let created: Int64 = 1_699_999_000_000
        for time in ["1700000000000.0001", "-9223372036854775809", "1700000000000.99999999999999999"] {
            let body = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","serverTimeInEpochMillis":"# + time + "}"
            #expect(classify(401, body, estimate: 7, created: created) == .definite(skew(7)), "\(time)")
        }
        let exact = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","serverTimeInEpochMillis":17000000000000e-1}"#
        #expect(classify(401, exact, estimate: 7, created: created) == .definite(skew(1_000_000)))
    }

    /// What else a body holds decides nothing: nesting deeper than Foundation's 512 levels, a name
    /// twice in another object or beside the two, a member of the same name inside. Before, any of
    /// these made JSONDecoder (or the duplicate check) drop the whole body, and the code with it.
    @Test func theRestOfTheBodyDecidesNothing() {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        let bodies = [
            #"{"x":"# + deep + #","errorCode":"CLOCK_SKEW_TOO_BIG"}"#,
            #"{"message":"a","message":"b","errorCode":"CLOCK_SKEW_TOO_BIG"}"#,
            #"{"x":{"y":1,"y":2},"errorCode":"CLOCK_SKEW_TOO_BIG"}"#,
            #"{"x":{"errorCode":"INVALID_SIGNATURE"},"errorCode":"CLOCK_SKEW_TOO_BIG"}"#,
            #"{"x":1e400,"errorCode":"CLOCK_SKEW_TOO_BIG"}"#,
            #"{"message":"\ud800","errorCode":"CLOCK_SKEW_TOO_BIG"}"#,
            #"{"a":[1,"\udc00",{"b":-1e999}],"errorCode":"CLOCK_SKEW_TOO_BIG"}"#,
        ]
        for body in bodies {
            #expect(classify(401, body, estimate: 7) == .definite(skew(7)), "\(body.prefix(80))")
        }
        // Not an object, or the member not a string: no code.
        for body in [#"["errorCode","CLOCK_SKEW_TOO_BIG"]"#, #"{"errorCode":["CLOCK_SKEW_TOO_BIG"]}"#] {
            #expect(classify(401, body, estimate: 7) == .notSkew, "\(body)")
        }
    }

    @Test func overflowingServerTimeFallsBackToTheEstimate() {
        let body = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","serverTimeInEpochMillis":9223372036854775807}"#
        #expect(classify(401, body, estimate: 7, created: -1) == .definite(skew(7)))
    }

    /// A server time more than 200 years from the device's is no time: the estimate stands. It
    /// used to be the measurement, and a compensated retry signed with it overflowed the
    /// signature's creation time (a deviceProtectionError). A device reset to 1970 is in range.
    @Test func anImplausibleServerTimeFallsBackToTheEstimate() {
        let created: Int64 = 1_700_000_000_000
        let farFuture = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","serverTimeInEpochMillis":9223372036854775807}"#
        #expect(classify(401, farFuture, estimate: 7, created: created) == .definite(skew(7)))
        let limit = ClockSkewClassification.plausibleOffsetMillis
        let atLimit = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","serverTimeInEpochMillis":\#(created + limit)}"#
        #expect(classify(401, atLimit, estimate: 7, created: created) == .definite(skew(limit)))
        let reset = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","serverTimeInEpochMillis":\#(created)}"#
        #expect(classify(401, reset, estimate: 7, created: 0) == .definite(skew(created)), "a clock reset to 1970")
    }

    @Test func bodiesWithoutTheCodeAreNotDefinite() {
        let bodies = [
            "", "CLOCK_SKEW_TOO_BIG", "<html>CLOCK_SKEW_TOO_BIG</html>", "null", "[]",
            #"["CLOCK_SKEW_TOO_BIG"]"#, #"{"errorCode":"clock_skew_too_big"}"#,
            #"{"errorCode":null}"#, #"{"errorCode":42}"#, #"{"error":"CLOCK_SKEW_TOO_BIG"}"#,
            #"{"errorCode":"CLOCK_SKEW_TOO_BIG""#,
        ]
        for body in bodies {
            #expect(classify(500, body, estimate: 0) == .notSkew, "\(body)")
        }
    }

    @Test func bodiesOverTheCapAreNotParsed() {
        let code = #"{"errorCode":"CLOCK_SKEW_TOO_BIG","pad":""#
        let fits = code + String(repeating: "x", count: 64 * 1_024 - code.utf8.count - 2) + #""}"#
        #expect(fits.utf8.count == 64 * 1_024)
        #expect(classify(500, fits, estimate: 0) == .definite(skew(0)))
        let tooBig = code + String(repeating: "x", count: 64 * 1_024 - code.utf8.count - 1) + #""}"#
        #expect(classify(500, tooBig, estimate: 0) == .notSkew)
        let huge = [UInt8](repeating: UInt8(ascii: "["), count: 10_000_000)
        #expect(
            ClockSkewClassification.classify(
                status: 401, body: huge, estimatedOffsetMillis: nil,
                toleranceMillis: Self.tolerance, server: Self.server) == .notSkew)
    }

    @Test func acceptsDataAsTheBody() {
        let body = Data(#"{"errorCode":"CLOCK_SKEW_TOO_BIG"}"#.utf8)
        #expect(
            ClockSkewClassification.classify(
                status: 401, body: body, estimatedOffsetMillis: 1,
                toleranceMillis: Self.tolerance, server: Self.server) == .definite(skew(1)))
    }

    @Test func probableOnlyOn401Or403BeyondTheTolerance() {
        for status in [401, 403] {
            #expect(classify(status, "", estimate: 60_001) == .probable(skew(60_001)), "\(status)")
            #expect(classify(status, "", estimate: -60_001) == .probable(skew(-60_001)), "\(status)")
            #expect(classify(status, "", estimate: 60_000) == .notSkew, "\(status)")
            #expect(classify(status, "", estimate: -60_000) == .notSkew, "\(status)")
            #expect(classify(status, "", estimate: nil) == .notSkew, "\(status)")
        }
        for status in [200, 400, 404, 407, 410, 500] {
            #expect(classify(status, "", estimate: 3_600_000) == .notSkew, "\(status)")
        }
    }

    /// A request signed with a compensating offset is judged by what it was still off by.
    @Test func probableCountsWhatTheCompensatedRequestWasStillOffBy() {
        func classify(estimate: Int64, signedWith offset: Int64) -> ClockSkewClassification {
            ClockSkewClassification.classify(
                status: 401, body: [UInt8](), estimatedOffsetMillis: estimate, toleranceMillis: Self.tolerance,
                server: Self.server, signedWithOffsetMillis: offset)
        }
        #expect(classify(estimate: 180_000, signedWith: 180_000) == .notSkew)
        #expect(classify(estimate: 180_000, signedWith: 120_000) == .notSkew, "off by exactly the tolerance")
        #expect(classify(estimate: 180_000, signedWith: 119_999) == .probable(skew(180_000)))
        #expect(classify(estimate: 0, signedWith: -60_001) == .probable(skew(0)), "over-compensated")
        // Opposite extremes: the distance exceeds Int64 and still counts, without trapping.
        #expect(classify(estimate: .max, signedWith: .min) == .probable(skew(.max)))
        #expect(classify(estimate: .min, signedWith: .max) == .probable(skew(.min)))
    }

    @Test func extremeEstimatesDoNotTrap() {
        #expect(classify(401, "", estimate: .min) == .probable(skew(.min)))
        #expect(
            ClockSkewClassification.classify(
                status: 401, body: [UInt8](), estimatedOffsetMillis: 5,
                toleranceMillis: -10, server: Self.server)
                == .probable(ClockSkew(server: Self.server, measuredOffsetMillis: 5, toleranceMillis: -10)))
    }

    @Test func clockSkewAccessor() {
        #expect(ClockSkewClassification.definite(skew(1)).clockSkew == skew(1))
        #expect(ClockSkewClassification.probable(skew(2)).clockSkew == skew(2))
        #expect(ClockSkewClassification.notSkew.clockSkew == nil)
    }
}

// Fuzz target `http-date`: HTTPDate.parseMillis on arbitrary text, and format → parse.
//
// Input: the text of a Date header. Its first 8 bytes, read as a little-endian Int64, are also an
// instant in milliseconds for the round trip. Checks, besides "no crash":
// - parsing against several reference clocks (for RFC 850's two-digit years, extremes included)
//   gives nil or a whole second in years 0000-9999 that formats to an IMF-fixdate which parses back
//   to the same instant;
// - format(m) is 29 bytes and parses back to m rounded down to the second (clamped to 0000-9999).

@testable import FetchChannelWire

private let referenceClocks: [Int64] = [1_700_000_000_000, 0, -62_135_596_800_000, .min, .max]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPDate(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let text = String(decoding: bytes, as: UTF8.self)

    var results: [Int64?] = [HTTPDate.parseMillis(text)]
    for now in referenceClocks {
        results.append(HTTPDate.parseMillis(text, nowMillis: now))
    }
    for case let millis? in results {
        fuzzCheck(millis % 1000 == 0, "parsed \(text.debugDescription) to \(millis), not a whole second")
        fuzzCheck((HTTPDate.minimumMillis...HTTPDate.maximumMillis).contains(millis), "parsed \(text.debugDescription) out of range")
        let formatted = HTTPDate.format(millis: millis)
        fuzzCheck(HTTPDate.parseMillis(formatted) == millis, "\(text.debugDescription) → \(millis) → \(formatted) does not parse back")
    }
    // A format without a clock-dependent year parses the same against every clock.
    if !text.contains("-") {
        fuzzCheck(results.allSatisfy { $0 == results[0] }, "\(text.debugDescription) parses differently against different clocks")
    }

    var reader = FuzzReader(bytes)
    let instant = reader.int64()
    let formatted = HTTPDate.format(millis: instant)
    fuzzCheck(formatted.utf8.count == 29, "format(\(instant)) is \(formatted.debugDescription)")
    let clamped = min(max(instant, HTTPDate.minimumMillis), HTTPDate.maximumMillis)
    let expected = HTTPDate.Civil.floorDiv(clamped, 1000) * 1000
    fuzzCheck(HTTPDate.parseMillis(formatted) == expected, "format(\(instant)) = \(formatted) does not parse back to \(expected)")
    return 0
}

func fuzzWarmUp() {
    _ = referenceClocks
    fuzzRun(fuzzHTTPDate, Array("Sunday, 06-Nov-94 08:49:37 GMT".utf8))
    fuzzRun(fuzzHTTPDate, Array("Sun, 06 Nov 1994 08:49:37 GMT".utf8))
}

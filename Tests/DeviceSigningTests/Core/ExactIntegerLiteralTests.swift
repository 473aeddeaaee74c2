import Testing

@testable import DeviceSigning

/// A number literal with a fraction or an exponent is an integer only when its digits make one:
/// no `Double` in between to round `T.0001` to `T`.
@Suite struct ExactIntegerLiteralTests {
    static func value(_ literal: String) -> Int64? {
        Array(literal.utf8).withUnsafeBytes { ExactIntegerLiteral.value(of: $0) }
    }

    @Test(arguments: [
        ("1.0", Int64(1)), ("1e3", 1_000), ("1E+2", 100), ("12.50e1", 125), ("10e-1", 1), ("-0.0", 0), ("0e99999", 0),
        ("0.0e-5", 0), ("1e18", 1_000_000_000_000_000_000), ("9223372036854775807e0", .max),
        ("-9223372036854775808.0", .min), ("1767225600000.000", 1_767_225_600_000),
        ("0.1767225600000e13", 1_767_225_600_000),
    ])
    func integralLiteralsAreTheirInteger(literal: String, expected: Int64) {
        #expect(Self.value(literal) == expected, "\(literal)")
    }

    @Test(arguments: [
        "1.5", "5e-1", "1767225600000.0001", "1767225600000.99999999999999999", "1.00000000000000000000001",
        "9223372036854775808.0", "-9223372036854775809e0", "1e19", "1e999999999999", "1e-99999999",
    ])
    func otherLiteralsAreNoInteger(literal: String) {
        #expect(Self.value(literal) == nil, "\(literal)")
    }

    /// The exponent saturates beyond any literal's length: a significand of 100,001 digits
    /// scaled by e-100001 is 0.1, or 1 with one digit more, whatever cap the exponent has.
    @Test func aLongSignificandMeetsAnExponentOfItsLength() {
        let zeros = String(repeating: "0", count: 100_000)
        #expect(Self.value("1" + zeros + "e-100001") == nil, "0.1")
        #expect(Self.value("1" + zeros + "0e-100001") == 1)
        #expect(Self.value("1" + zeros + "e-99999999999999999999") == nil)
    }

    /// Only a reader that asks for it reads them as integers: `parse` keeps `1.0` a number.
    @Test func onlyTheOptInParseReadsThemAsIntegers() throws {
        let text = Array(#"{"a":1.0,"b":2.5}"#.utf8)
        let plain = try StrictJSON.parse(text)
        let exact = try StrictJSON.parseIntegralLiteralsAsIntegers(text)
        #expect(plain == .object(["a": .number(1), "b": .number(2.5)]))
        #expect(exact == .object(["a": .integer(1), "b": .number(2.5)]))
    }
}

/// The integer a JSON number literal with a fraction or an exponent stands for, when it stands
/// for one exactly: `1.0` and `1e3` do, `1.5` and `1767225600000.0001` do not. Decided on the
/// decimal digits, never on a `Double`, which rounds `T.0001` to `T` and `T.99999999999999999`
/// to `T + 1`.
enum ExactIntegerLiteral {
    /// The value of `literal` (RFC 8259 number syntax, already checked by the reader) when it is
    /// an integer in the signed 64-bit range; nil otherwise.
    static func value(of literal: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        let negative = literal.first == UInt8(ascii: "-")
        if negative { index += 1 }
        // The significant digits (integer part, then fraction) and the power of ten they are scaled by.
        var digits: [UInt8] = []
        var scale = 0
        var inFraction = false
        while index < literal.count {
            let byte = literal[index]
            if byte == UInt8(ascii: ".") {
                inFraction = true
            } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                break
            } else {
                if !(digits.isEmpty && byte == UInt8(ascii: "0")) { digits.append(byte &- UInt8(ascii: "0")) }
                if inFraction { scale -= 1 }
            }
            index += 1
        }
        if index < literal.count {
            index += 1  // the e
            var exponentNegative = false
            if literal[index] == UInt8(ascii: "+") || literal[index] == UInt8(ascii: "-") {
                exponentNegative = literal[index] == UInt8(ascii: "-")
                index += 1
            }
            // Saturating far beyond any literal's length (a significand has fewer digits than the
            // text has bytes), so a capped exponent decides the answer as its value would: with a
            // cap of 100,000, a 1 followed by 100,000 zeros and e-100001 (0.1) read as 1.
            var exponent = 0
            while index < literal.count {
                exponent = min(1 << 40, exponent * 10 + Int(literal[index] &- UInt8(ascii: "0")))
                index += 1
            }
            scale += exponentNegative ? -exponent : exponent
        }
        while let last = digits.last, last == 0 {
            digits.removeLast()
            scale += 1
        }
        guard !digits.isEmpty else { return 0 }  // zero, however written
        // A fraction left, or more than the 19 digits of Int64: not an integer in 64 bits.
        guard scale >= 0, digits.count + scale <= 19 else { return nil }
        var magnitude: UInt64 = 0
        for digit in digits + [UInt8](repeating: 0, count: scale) {
            let (times10, overflowA) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times10.addingReportingOverflow(UInt64(digit))
            guard !overflowA, !overflowB else { return nil }
            magnitude = sum
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return Int64(truncatingIfNeeded: 0 &- magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }
}

/// A number as a person writes it for an option (`--seconds 0.05`, `--tolerance-seconds 1e3`):
/// read one way by every command that takes one, so that they accept and refuse the same texts.
package enum DecimalLiteral {
    /// The finite value of `text` when it is spelled with digits, signs, a point and an exponent
    /// only (`12`, `-0.5`, `1e3`); nil otherwise, also for the other spellings `Double(_:)` reads
    /// (`0x1p3`, `inf`, `nan`), which a person does not mean as a number of seconds.
    package static func value(of text: String) -> Double? {
        let decimalOnly = text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "e"), UInt8(ascii: "E"):
                true
            default: false
            }
        }
        guard decimalOnly, let number = Double(text), number.isFinite else { return nil }
        return number
    }
}

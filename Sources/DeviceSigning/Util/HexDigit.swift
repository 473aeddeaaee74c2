/// One hexadecimal digit's value, for the parsers that read `\uXXXX` escapes and `%XX` escapes.
package enum HexDigit {
    /// 0...15 for `0-9`, `a-f`, `A-F`; nil for any other byte.
    package static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

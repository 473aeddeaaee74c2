/// What a JSON two-character escape `\X` stands for (RFC 8259 §7), for the package's JSON
/// reader (`StrictJSONReader`).
package enum JSONEscape {
    /// The character for `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t` (given the byte after the
    /// backslash); nil for any other byte, `u` included.
    package static func character(after byte: UInt8) -> Unicode.Scalar? {
        switch byte {
        case UInt8(ascii: "\""): "\""
        case UInt8(ascii: "\\"): "\\"
        case UInt8(ascii: "/"): "/"
        case UInt8(ascii: "b"): "\u{08}"
        case UInt8(ascii: "f"): "\u{0C}"
        case UInt8(ascii: "n"): "\n"
        case UInt8(ascii: "r"): "\r"
        case UInt8(ascii: "t"): "\t"
        default: nil
        }
    }
}

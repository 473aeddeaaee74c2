/// What a JSON two-character escape `\X` stands for (RFC 8259 §7), for the package's JSON
/// reader (`StrictJSONReader`), and the escapes a JSON string needs, for text written byte by byte.
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

    /// Appends `byte` as it goes inside a JSON string: `"` and `\` escaped, control characters as
    /// `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX`, every other byte (UTF-8 included) as it is. For text
    /// that must not become a `String` (a secret written into a JSON document).
    package static func appendEscaped(_ byte: UInt8, to output: inout [UInt8]) {
        let escape: UInt8?
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): escape = byte
        case 0x0A: escape = UInt8(ascii: "n")
        case 0x0D: escape = UInt8(ascii: "r")
        case 0x09: escape = UInt8(ascii: "t")
        case 0x08: escape = UInt8(ascii: "b")
        case 0x0C: escape = UInt8(ascii: "f")
        case 0..<0x20:
            let hex = Array("0123456789abcdef".utf8)
            output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            output.append(contentsOf: [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            return
        default: escape = nil
        }
        if let escape { output.append(contentsOf: [UInt8(ascii: "\\"), escape]) } else { output.append(byte) }
    }

    /// The most bytes ``appendEscaped(_:to:)`` appends for one byte (`\u00XX`).
    package static let longestEscape = 6
}

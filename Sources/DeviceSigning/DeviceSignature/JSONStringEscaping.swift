/// Writes JSON string literals (RFC 8259 §7) without Foundation, for the signing hot path.
///
/// The output is the one Python's `json.dumps(s, ensure_ascii=False)` produces, so vectors can be
/// derived independently: `"` and `\` are escaped; U+0008, U+0009, U+000A, U+000C and U+000D get
/// their two-character escapes; every other code point below U+0020 is `\u00xx` (lowercase hex);
/// everything else, DEL and non-ASCII included, is copied as UTF-8.
enum JSONStringEscaping {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `"` + the escaped UTF-8 of `string` + `"` to `output`.
    static func appendQuoted(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Fast path (request ids are UUIDs): nothing to escape, copy the bytes in one go.
        if !string.utf8.contains(where: needsEscape) {
            output.append(contentsOf: string.utf8)
            output.append(UInt8(ascii: "\""))
            return
        }
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x00..<0x20:
                output.append(contentsOf: Array(#"\u00"#.utf8))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            default:
                // Bytes of multi-byte UTF-8 sequences are >= 0x80 and never need escaping.
                output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    static func quoted(_ string: String) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(string.utf8.count + 2)
        appendQuoted(string, to: &output)
        return output
    }
}

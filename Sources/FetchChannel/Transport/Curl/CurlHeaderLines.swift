import FetchChannelWire

/// The request's header fields as the lines handed to libcurl (CURLOPT_HTTPHEADER).
///
/// A field whose name is not an HTTP token, or whose value holds a control character other than
/// tab (CR, LF and NUL among them), is refused before anything is sent: it would let a value (a
/// token, a signature) start a header field or a request of its own, and RFC 9110 §5.5 allows no
/// other. A value's leading and trailing spaces and tabs are not part of it (§5.5) and are not
/// sent: libcurl reads `Name:` followed by blanks alone as "remove the field", so a value of
/// blanks would have gone unsent, or removed one of libcurl's defaults. libcurl's own defaults that the caller did not ask for are switched off
/// with an empty `Name:` line: `Accept: */*`, a form `Content-Type` for bodies, and
/// `Expect: 100-continue` (which would hold large bodies back for a second). Pure Swift.
enum CurlHeaderLines {
    static func lines(for headers: [String: String], hasBody: Bool) throws(NetworkFailure) -> [String] {
        var lines: [String] = []
        lines.reserveCapacity(headers.count + 3)
        // Field names are case-insensitive (RFC 9110 §5.1): two keys that differ only in case
        // would send one field twice (two Device-Signatures, two Content-Types).
        var lowercasedNames = Set<String>(minimumCapacity: headers.count)
        // Sorted: the same request always sends the same bytes.
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            guard isToken(name) else {
                throw NetworkFailure(.other, detail: "the header name \(name.debugDescription) is not an HTTP token")
            }
            guard lowercasedNames.insert(name.lowercased()).inserted else {
                throw NetworkFailure(
                    .other, detail: "the header \(name) is given twice (the names differ only in case)")
            }
            guard !value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else {
                throw NetworkFailure(
                    .other,
                    detail: "the value of the header \(name) contains a control character (CR, LF, NUL or another)")
            }
            let trimmed = Self.withoutSurroundingBlanks(value)
            // libcurl reads "Name:" as "remove", so an empty value is written "Name;".
            lines.append(trimmed.isEmpty ? "\(name);" : "\(name): \(trimmed)")
        }
        for (name, needed) in [(WireHeader.accept, true), (WireHeader.contentType, hasBody), (WireHeader.expect, true)]
        where needed && !headers.keys.contains(where: { equalIgnoringASCIICase($0, name) }) {
            lines.append(name + ":")
        }
        return lines
    }

    /// `value` without leading and trailing spaces and tabs (RFC 9110 §5.5's OWS).
    static func withoutSurroundingBlanks(_ value: String) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = value.firstIndex(where: { !isBlank($0) }), let last = value.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return value[first...last]
    }

    /// Whether `text` is an HTTP token (RFC 9110 §5.6.2): one or more tchar.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { isTokenCharacter[Int($0)] }
    }

    /// tchar by byte value: ALPHA, DIGIT and `!#$%&'*+-.^_`|~`.
    private static let isTokenCharacter: [Bool] = (0..<256).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(UInt8(byte))
        }
    }

    /// Field names compare without regard to ASCII case (RFC 9110 §5.1).
    private static func equalIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        func lowered(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
        return a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lowered($0) == lowered($1) }
    }
}

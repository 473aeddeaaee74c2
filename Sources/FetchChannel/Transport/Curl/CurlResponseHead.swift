/// The status and header fields of an answer, built from the header lines libcurl passes one at
/// a time: a status line, fields, an empty line; interim (1xx) heads come first and are replaced
/// by the final one. Trailer fields after the final head are ignored.
///
/// Pure Swift (no libcurl): libcurl has already checked the syntax, this only collects, reading a
/// status line by libcurl's own rule (``statusCode(of:)``). Works on the bytes (names lowercased
/// as ASCII, values trimmed of spaces and tabs) and makes one String per name and value: this runs
/// for every line of every answer.
struct CurlResponseHead {
    private(set) var status: Int?
    /// Lowercased names; a repeated field joined with ", " (as ``HTTPAnswer`` does).
    private(set) var headers = [String: String](minimumCapacity: 8)  // an answer's usual few
    /// The final (non-1xx) head has ended.
    private(set) var isComplete = false
    private var lastName: String?
    /// The next line is a head's first: only there is a line that starts with `HTTP/` a status
    /// line (libcurl passes a later one on as a header line).
    private var atHeadStart = true

    /// The announced body length, if the final head has one and it is a number (a value that
    /// overflows counts as `Int.max`). Several values (joined by ", ") count by their largest.
    var contentLength: Int? {
        guard let field = headers["content-length"] else { return nil }
        var largest: Int?
        for part in field.utf8.split(separator: UInt8(ascii: ",")) {
            let digits = Self.trimmed(part)
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { continue }
            largest = max(largest ?? 0, Int(Substring(digits)) ?? Int.max)
        }
        return largest
    }

    /// One line as libcurl gives it, with its CRLF.
    mutating func receive(line raw: UnsafeRawBufferPointer) {
        guard !isComplete else { return }  // trailers
        var line = raw[...]
        while let last = line.last, last == 0x0D || last == 0x0A { line = line.dropLast() }

        let isFirstLine = atHeadStart
        atHeadStart = false
        if isFirstLine, line.starts(with: "HTTP/".utf8) {
            self = CurlResponseHead()
            atHeadStart = false
            status = Self.statusCode(of: line)
            return
        }
        if line.isEmpty {
            // The end of a head: an interim (1xx) one is followed by another.
            if let status, !(100...199).contains(status) { isComplete = true } else { atHeadStart = true }
            return
        }
        // Values grow in place (`append` on the dictionary's own storage): a repeated field or a
        // fold joined by copying the value so far cost time quadratic in the head's size, inside
        // libcurl's callback, under the transport's lock (an answer of 100,000 `x:` lines: seconds).
        if let first = line.first, first == 0x20 || first == 0x09, let lastName {
            // An obsolete folded continuation (RFC 9112 §5.2): one space instead of the fold.
            headers[lastName, default: ""].append(" ")
            headers[lastName, default: ""].append(Self.text(Self.trimmed(line)))
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        // Blanks before the colon are not allowed (RFC 9112 §5.1), but libcurl passes them on:
        // `Age : 120` is still the Age field (as a proxy must make it), not a field named "age ".
        let name = Self.lowercasedText(Self.trimmed(line[..<colon]))
        let value = Self.text(Self.trimmed(line[(colon + 1)...]))
        if headers[name] == nil {
            headers[name] = value
        } else {
            headers[name, default: ""].append(", ")
            headers[name, default: ""].append(value)
        }
        lastName = name
    }

    /// The status code of a status line as libcurl (7.88) reads it: after the version, a space,
    /// any blanks, then three digits not followed by a fourth; whatever follows them is the reason
    /// (`200 OK`, `200\tOK`, even `200OK`). Read otherwise, a head libcurl took as final would be
    /// waited on here as an interim one, and the checks at its end would never run. Nil for a line
    /// libcurl refuses too (it then fails the transfer).
    static func statusCode(of line: Slice<UnsafeRawBufferPointer>) -> Int? {
        guard let space = line.firstIndex(of: 0x20) else { return nil }
        let isBlank: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0D).contains($0) }  // C's isspace
        let isDigit: (UInt8) -> Bool = { $0 >= 0x30 && $0 <= 0x39 }
        let start = line[(space + 1)...].firstIndex { !isBlank($0) } ?? line.endIndex
        let digits = line[start...].prefix(while: isDigit)
        guard digits.count == 3 else { return nil }
        let code = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return code >= 100 ? code : nil
    }

    /// The bytes as a string with ASCII letters lowercased, written straight into its storage.
    private static func lowercasedText(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { buffer in
            for (offset, byte) in bytes.enumerated() {
                buffer[offset] = byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
            }
            return bytes.count
        }
    }

    /// Without leading and trailing spaces and tabs (RFC 9110 §5.5 OWS).
    private static func trimmed<Bytes: BidirectionalCollection>(_ bytes: Bytes) -> Bytes.SubSequence
    where Bytes.Element == UInt8 {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        let start = bytes.firstIndex { !isSpace($0) } ?? bytes.endIndex
        let end = bytes[start...].lastIndex { !isSpace($0) }.map { bytes.index(after: $0) } ?? start
        return bytes[start..<end]
    }

    private static func text(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes), as: UTF8.self)
    }
}

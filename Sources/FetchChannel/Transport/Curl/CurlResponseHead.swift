import Foundation

/// The status and header fields of an answer, built from the header lines libcurl passes one at
/// a time: a status line, fields, an empty line; interim (1xx) heads come first and are replaced
/// by the final one. Trailer fields after the final head are ignored.
///
/// Pure Swift (no libcurl): libcurl has already checked the syntax, this only collects.
struct CurlResponseHead {
    private(set) var status: Int?
    /// Lowercased names; a repeated field joined with ", " (as ``HTTPAnswer`` does).
    private(set) var headers: [String: String] = [:]
    /// The final (non-1xx) head has ended.
    private(set) var isComplete = false
    private var lastName: String?

    /// The announced body length, if the final head has one and it is a number (a value that
    /// overflows counts as `Int.max`). Several values (joined by ", ") count by their largest.
    var contentLength: Int? {
        guard let field = headers["content-length"] else { return nil }
        var largest: Int?
        for part in field.split(separator: ",") {
            let digits = part.trimmingCharacters(in: .whitespaces)
            guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { continue }
            largest = max(largest ?? 0, Int(digits) ?? Int.max)
        }
        return largest
    }

    /// One line as libcurl gives it, with its CRLF.
    mutating func receive(line bytes: UnsafeRawBufferPointer) {
        guard !isComplete else { return }  // trailers
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0D || bytes[end - 1] == 0x0A { end -= 1 }
        let line = Substring(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<end]), as: UTF8.self))

        if line.hasPrefix("HTTP/") {
            self = CurlResponseHead()
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            if parts.count >= 2, parts[1].utf8.count == 3 { status = Int(parts[1]) }
            return
        }
        if line.isEmpty {
            // The end of a head: an interim (1xx) one is followed by another.
            if let status, !(100...199).contains(status) { isComplete = true }
            return
        }
        if let first = line.first, first == " " || first == "\t", let lastName {
            // An obsolete folded continuation (RFC 9112 §5.2): one space instead of the fold.
            headers[lastName, default: ""] += " " + line.trimmingCharacters(in: .whitespaces)
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        headers[name] = headers[name].map { $0 + ", " + value } ?? value
        lastName = name
    }
}

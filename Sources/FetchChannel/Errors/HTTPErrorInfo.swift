import Foundation

/// A backend's HTTP error answer, as carried by a typed error: the status and a bounded excerpt
/// of the body, for logs and support.
///
/// The excerpt is at most ``maximumExcerptBytes`` bytes of UTF-8, cut on a character (Unicode
/// scalar) boundary; invalid UTF-8 becomes U+FFFD. It never contains the request's
/// Device-Signature: a backend or proxy that echoes the request is redacted before the cut.
public struct HTTPErrorInfo: Sendable, Hashable, CustomStringConvertible {
    /// The largest excerpt kept, in UTF-8 bytes.
    public static let maximumExcerptBytes = 1_024
    /// What replaces an echoed Device-Signature (or its signature part) in the excerpt.
    public static let redactionMarker = "[redacted]"

    /// The HTTP status code.
    public let status: Int
    /// The start of the body as text, at most ``maximumExcerptBytes`` UTF-8 bytes.
    public let bodyExcerpt: String
    /// The size of the body as received (before redaction and cutting).
    public let bodyByteCount: Int
    /// Whether the excerpt was cut: the body, redacted, is longer than it.
    public let isTruncated: Bool

    /// Keeps `excerpt` as given except that it is cut to ``maximumExcerptBytes``.
    public init(status: Int, bodyExcerpt: String, bodyByteCount: Int? = nil) {
        self.status = status
        self.bodyExcerpt = Self.prefix(of: bodyExcerpt, maximumUTF8Bytes: Self.maximumExcerptBytes)
        self.bodyByteCount = bodyByteCount ?? bodyExcerpt.utf8.count
        isTruncated = self.bodyExcerpt.utf8.count < self.bodyByteCount
    }

    /// The excerpt of `body`, with every occurrence of each of `secrets` (and of a JWS secret's
    /// signature part) replaced by ``redactionMarker`` before cutting.
    public init(status: Int, body: some Collection<UInt8>, redacting secrets: [String] = []) {
        self.status = status
        self.bodyByteCount = body.count
        // The whole body (the transport bounds it at 1 MiB) is redacted before the cut: redacting
        // only a window could let the tail of a partly cut secret slide into the excerpt.
        // A few bytes past the limit are enough to decode (a scalar cut there decodes as U+FFFD
        // beyond the limit, so it never reaches the excerpt).
        let targets = Self.redactionTargets(secrets)
        var bytes = targets.isEmpty ? Array(body.prefix(Self.maximumExcerptBytes + 4)) : Array(body)
        let marker = Array(Self.redactionMarker.utf8)
        for target in targets {
            bytes = Self.replacingOccurrences(of: Array(target.utf8), in: bytes, with: marker)
        }
        let text = String(decoding: bytes.prefix(Self.maximumExcerptBytes + 4), as: UTF8.self)
        self.bodyExcerpt = Self.prefix(of: text, maximumUTF8Bytes: Self.maximumExcerptBytes)
        // Against the redacted body, not the one received: a short body whose secret was
        // replaced is not cut.
        isTruncated = bytes.count > Self.maximumExcerptBytes + 4 || self.bodyExcerpt.utf8.count < text.utf8.count
    }

    public var description: String {
        bodyExcerpt.isEmpty ? "HTTP \(status)" : "HTTP \(status): \(bodyExcerpt)\(isTruncated ? "…" : "")"
    }

    /// Longest first, so that the whole value is replaced before its signature part.
    static func redactionTargets(_ secrets: [String]) -> [String] {
        var targets: [String] = []
        for secret in secrets where !secret.isEmpty {
            targets.append(secret)
            // Echoed inside JSON, as the redeem request sends a token: escaped, `/` as `\/` or
            // not, as the echoing side's serializer chooses.
            for escaped in jsonEscapedForms(of: secret) where !targets.contains(escaped) { targets.append(escaped) }
            // A compact JWS: a body that echoes only the signature part must not leak it either.
            let parts = secret.split(separator: ".", omittingEmptySubsequences: false)
            if parts.count == 3, parts[2].utf8.count >= 16 { targets.append(String(parts[2])) }
        }
        return targets.sorted { $0.utf8.count > $1.utf8.count }
    }

    /// `secret` as a JSON string's content (without the quotes), with and without `/` escaped.
    private static func jsonEscapedForms(of secret: String) -> [String] {
        [JSONSerialization.WritingOptions.fragmentsAllowed, [.fragmentsAllowed, .withoutEscapingSlashes]].compactMap {
            guard let data = try? JSONSerialization.data(withJSONObject: secret, options: $0), data.count >= 2 else {
                return nil
            }
            return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
        }
    }

    /// `text` with every occurrence of each of `secrets` replaced by ``redactionMarker``: for a
    /// reason that quotes the backend's answer (the CLI's own backend calls too).
    package static func redacted(_ text: String, _ secrets: [String]) -> String {
        var bytes = Array(text.utf8)
        let marker = Array(redactionMarker.utf8)
        for target in redactionTargets(secrets) {
            bytes = replacingOccurrences(of: Array(target.utf8), in: bytes, with: marker)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` with each occurrence of `pattern`, leftmost first and not overlapping, replaced by
    /// `marker`. Byte for byte, in time linear in `text` and `pattern` whatever they hold
    /// (Knuth-Morris-Pratt): the body and a redeem token both come from the backend, and a
    /// quadratic search would let a hostile pair hold the caller for minutes.
    static func replacingOccurrences(of pattern: [UInt8], in text: [UInt8], with marker: [UInt8]) -> [UInt8] {
        guard !pattern.isEmpty, text.count >= pattern.count else { return text }
        // border[i]: the length of the longest proper prefix of pattern[...i] that also ends it.
        var border = [Int](repeating: 0, count: pattern.count)
        var length = 0
        for index in 1..<pattern.count {
            while length > 0, pattern[index] != pattern[length] { length = border[length - 1] }
            if pattern[index] == pattern[length] { length += 1 }
            border[index] = length
        }
        var output: [UInt8] = []
        output.reserveCapacity(text.count)
        var copied = 0
        var matched = 0
        for index in text.indices {
            while matched > 0, text[index] != pattern[matched] { matched = border[matched - 1] }
            if text[index] == pattern[matched] { matched += 1 }
            guard matched == pattern.count else { continue }
            output.append(contentsOf: text[copied..<(index + 1 - pattern.count)])
            output.append(contentsOf: marker)
            copied = index + 1
            matched = 0
        }
        guard copied > 0 else { return text }
        output.append(contentsOf: text[copied...])
        return output
    }

    /// The longest prefix of `text` that is at most `limit` UTF-8 bytes and ends on a scalar boundary.
    static func prefix(of text: String, maximumUTF8Bytes limit: Int) -> String {
        let utf8 = text.utf8
        guard utf8.count > limit else { return text }
        var end = utf8.index(utf8.startIndex, offsetBy: limit)
        // Step back over continuation bytes (10xxxxxx) to the start of the cut scalar.
        while end > utf8.startIndex, utf8[end] & 0xC0 == 0x80 { end = utf8.index(before: end) }
        return String(text[..<end])
    }
}

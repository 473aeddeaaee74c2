import Foundation

/// The media types of the wire contract (docs/ARCHITECTURE.md, "Wire contract" and "Encrypted
/// answers"), and how a `Content-Type` value is matched against them.
public enum WireMediaType {
    /// Request bodies, error answers and plain operations answers.
    public static let json = "application/json"
    /// An encrypted operations answer: a compact JWE.
    public static let jose = "application/jose"
    /// The Accept value the vendor's clients send, and the Content-Type of a JWE answer.
    public static let joseUTF8 = jose + ";charset=UTF-8"
    /// The media-range wildcards an Accept field may hold instead of `application/json`.
    public static let anyApplication = "application/*"
    public static let any = "*/*"

    /// `application/jose`, any case, parameters ignored.
    public static func isJOSE(_ contentType: String) -> Bool {
        essence(of: contentType) == jose
    }

    /// `application/json` or `application/<anything>+json`, any case, parameters ignored.
    public static func isJSON(_ contentType: String) -> Bool {
        let mediaType = essence(of: contentType)
        if mediaType == json { return true }
        guard mediaType.hasPrefix(applicationPrefix), mediaType.hasSuffix(jsonSuffix) else { return false }
        return mediaType.count > applicationPrefix.count + jsonSuffix.count
    }

    private static let applicationPrefix = "application/"
    private static let jsonSuffix = "+json"

    /// The type/subtype before any parameter, trimmed of spaces and lowercased.
    private static func essence(of contentType: String) -> String {
        let mediaType = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        // ASCII (every real value): the only ASCII characters in `.whitespaces` are space and tab,
        // trimmed here without Foundation's CharacterSet, which costs microseconds per answer.
        guard mediaType.utf8.allSatisfy({ $0 < 0x80 }) else {
            return mediaType.trimmingCharacters(in: .whitespaces).lowercased()
        }
        let isBlank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let bytes = mediaType.utf8
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return String(mediaType[first...last]).lowercased()
    }
}

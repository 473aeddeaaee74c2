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
        guard let essence = asciiEssence(of: contentType) else { return false }
        return matches(essence, jose)
    }

    /// `application/jose+json`, any case, parameters ignored: a JWE in its JSON serialization,
    /// which is JSON only in syntax (and not an answer this package decrypts).
    public static func isJOSEJSON(_ contentType: String) -> Bool {
        guard let essence = asciiEssence(of: contentType) else { return false }
        return matches(essence, joseJSON)
    }

    private static let joseJSON = jose + "+json"

    /// `application/json` or `application/<subtype>+json`, any case, parameters ignored; the
    /// subtype a token (RFC 9110 §5.6.2), so that two types joined by ", " (a repeated field) or a
    /// subtype with blanks is none.
    public static func isJSON(_ contentType: String) -> Bool {
        guard let essence = asciiEssence(of: contentType) else { return false }
        if matches(essence, json) { return true }
        return essence.count > applicationPrefix.utf8.count + jsonSuffix.utf8.count
            && matches(essence.prefix(applicationPrefix.utf8.count), applicationPrefix)
            && matches(essence.suffix(jsonSuffix.utf8.count), jsonSuffix)
            && essence.dropFirst(applicationPrefix.utf8.count).allSatisfy(isTokenByte)
    }

    /// A `tchar` of RFC 9110 §5.6.2: a letter, a digit, or one of ``!#$%&'*+-.^_`|~``.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    private static let applicationPrefix = "application/"
    private static let jsonSuffix = "+json"

    /// The type/subtype before any parameter, trimmed of spaces and tabs (the only blanks RFC 9110
    /// allows around it), as bytes of the value; nil when it is not ASCII, as no media type is.
    /// Matched without a String made or lowercased: this runs for every answer.
    private static func asciiEssence(of contentType: String) -> Substring.UTF8View? {
        let bytes = contentType.utf8
        let end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        let isBlank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let first = bytes[..<end].firstIndex { !isBlank($0) } ?? end
        let last = bytes[first..<end].lastIndex { !isBlank($0) }.map { bytes.index(after: $0) } ?? first
        let essence = bytes[first..<last]
        return essence.allSatisfy({ $0 < 0x80 }) ? essence : nil
    }

    /// The bytes equal `lowercase` (a lowercase ASCII constant) with ASCII letters in any case.
    private static func matches<Bytes: Collection<UInt8>>(_ bytes: Bytes, _ lowercase: String) -> Bool {
        bytes.elementsEqual(lowercase.utf8) { byte, expected in
            (byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte) == expected
        }
    }
}

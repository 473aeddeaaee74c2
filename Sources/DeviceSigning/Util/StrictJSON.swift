import Foundation

/// The check Foundation's JSON decoders do not make: that no object has two members of the same
/// name (RFC 8259 §4 leaves duplicates to the parser; RFC 7515 §5.2 and §10.12 require a JWS
/// header with them to be rejected).
///
/// Why: `JSONSerialization` keeps the last of two duplicate members and `JSONDecoder` the first,
/// so `{"alg":"none","alg":"ES256"}` means one thing to one decoder and another to the next.
/// Every JSON text this package verifies or stores (JWS and JWE protected headers, the
/// Device-Signature payload, JWKs, key store metadata) passes through here before Foundation
/// parses it; docs/ARCHITECTURE.md, "Invariants".
///
/// The scan is a complete RFC 8259 syntax check over UTF-8 (no BOM, no comments, no trailing
/// commas, no unescaped control characters, strict numbers), so it splits the text into members
/// exactly as any conforming parser does; objects at every depth are checked, inside arrays too.
/// Names are compared after unescaping (`"\u0061lg"` is `"alg"`) and as Swift strings, that is up
/// to canonical equivalence, which is how Foundation keys the dictionaries it builds: two names
/// a decoder could take for one another are always refused. Values are read in place and never
/// copied, so the text may hold a secret (a private JWK); only member names are materialised.
/// Iterative, with no recursion: nesting depth is bounded by the input's length only.
package enum StrictJSON {
    /// Why a text was refused.
    package enum Violation: Error, Sendable, Hashable, CustomStringConvertible {
        /// Not RFC 8259 JSON text in UTF-8; `offset` is the first byte where it stops being JSON.
        case notJSON(offset: Int)
        /// An object has two members with this (unescaped) name.
        case duplicateMemberName(String)

        /// For error messages: the name, shortened and with control characters replaced.
        package var description: String {
            switch self {
            case .notJSON(let offset):
                return "not JSON text (byte \(offset))"
            case .duplicateMemberName(let name):
                let printable = String(
                    String.UnicodeScalarView(
                        name.unicodeScalars.prefix(64).map {
                            $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "?" : $0
                        }))
                return "the member \"\(printable)\" appears more than once in one object"
            }
        }
    }

    /// Throws the first violation in `json`: a syntax error, or an object with a duplicate member name.
    package static func requireUniqueMemberNames<Bytes: ContiguousBytes>(_ json: Bytes) throws(Violation) {
        let violation = json.withUnsafeBytes { bytes -> Violation? in
            var scanner = StrictJSONScanner(bytes: bytes)
            return scanner.firstViolation()
        }
        if let violation { throw violation }
    }
}

/// One pass over the text with an explicit stack of open containers.
private struct StrictJSONScanner {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0
    /// One entry per open container: true for an object, false for an array.
    private var containerIsObject: [Bool] = []
    /// The names seen so far in each open object, innermost last.
    private var memberNames: [Set<String>] = []

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    private var notJSON: StrictJSON.Violation { .notJSON(offset: position) }

    mutating func firstViolation() -> StrictJSON.Violation? {
        if let invalid = Self.firstInvalidUTF8Offset(bytes) { return .notJSON(offset: invalid) }
        while true {
            // A value starts here.
            skipWhitespace()
            guard let byte = peek() else { return notJSON }
            switch byte {
            case UInt8(ascii: "{"):
                position += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "}") {
                    position += 1
                } else {
                    containerIsObject.append(true)
                    memberNames.append([])
                    if let violation = readMemberName() { return violation }
                    continue
                }
            case UInt8(ascii: "["):
                position += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "]") {
                    position += 1
                } else {
                    containerIsObject.append(false)
                    continue
                }
            case UInt8(ascii: "\""):
                var unused: [UInt8]?
                guard scanString(collectingInto: &unused) else { return notJSON }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard scanNumber() else { return notJSON }
            case UInt8(ascii: "t"):
                guard scanLiteral("true") else { return notJSON }
            case UInt8(ascii: "f"):
                guard scanLiteral("false") else { return notJSON }
            case UInt8(ascii: "n"):
                guard scanLiteral("null") else { return notJSON }
            default:
                return notJSON
            }
            // A value ended: close containers until one continues with another element.
            while true {
                skipWhitespace()
                guard let isObject = containerIsObject.last else {
                    return position == bytes.count ? nil : notJSON
                }
                guard let byte = peek() else { return notJSON }
                position += 1
                if byte == UInt8(ascii: ",") {
                    if isObject, let violation = readMemberName() { return violation }
                    break
                }
                guard byte == UInt8(ascii: isObject ? "}" : "]") else {
                    position -= 1
                    return notJSON
                }
                containerIsObject.removeLast()
                if isObject { memberNames.removeLast() }
            }
        }
    }

    /// Reads `"name" :` in the innermost object and records the name.
    private mutating func readMemberName() -> StrictJSON.Violation? {
        skipWhitespace()
        guard peek() == UInt8(ascii: "\"") else { return notJSON }
        var name: [UInt8]? = []
        guard scanString(collectingInto: &name) else { return notJSON }
        let text = String(decoding: name ?? [], as: UTF8.self)
        guard memberNames[memberNames.count - 1].insert(text).inserted else {
            return .duplicateMemberName(text)
        }
        skipWhitespace()
        guard peek() == UInt8(ascii: ":") else { return notJSON }
        position += 1
        return nil
    }

    private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = peek(),
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
                || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
        {
            position += 1
        }
    }

    /// Scans a string starting at its opening quote; appends its unescaped UTF-8 to `decoded`
    /// unless that is nil (values are skipped without a copy).
    private mutating func scanString(collectingInto decoded: inout [UInt8]?) -> Bool {
        position += 1
        while let byte = peek() {
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return true
            case UInt8(ascii: "\\"):
                guard let scalar = scanEscape() else { return false }
                if decoded != nil { Unicode.UTF8.encode(scalar) { decoded?.append($0) } }
            case 0..<0x20:
                position -= 1
                return false
            default:
                decoded?.append(byte)
            }
        }
        return false
    }

    /// Scans what follows a backslash; a `\u` surrogate pair gives one scalar, a lone surrogate U+FFFD.
    private mutating func scanEscape() -> Unicode.Scalar? {
        guard let byte = peek() else { return nil }
        position += 1
        if let character = JSONEscape.character(after: byte) { return character }
        switch byte {
        case UInt8(ascii: "u"):
            guard let unit = scanHex4() else { return nil }
            if (0xD800...0xDBFF).contains(unit), peek() == UInt8(ascii: "\\"),
                position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u")
            {
                let mark = position
                position += 2
                guard let low = scanHex4() else { return nil }
                if (0xDC00...0xDFFF).contains(low) {
                    return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                }
                position = mark  // not a pair: the second escape is read on its own
            }
            return Unicode.Scalar(unit) ?? "\u{FFFD}"
        default:
            return nil
        }
    }

    private mutating func scanHex4() -> UInt32? {
        guard position + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = HexDigit.value(bytes[position]) else { return nil }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func scanNumber() -> Bool {
        if peek() == UInt8(ascii: "-") { position += 1 }
        if peek() == UInt8(ascii: "0") {
            position += 1
        } else if !scanDigits() {
            return false
        }
        if peek() == UInt8(ascii: ".") {
            position += 1
            guard scanDigits() else { return false }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard scanDigits() else { return false }
        }
        return true
    }

    /// One or more decimal digits.
    private mutating func scanDigits() -> Bool {
        let start = position
        while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { position += 1 }
        return position > start
    }

    private mutating func scanLiteral(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        for index in 0..<count where bytes[position + index] != literal.utf8Start[index] {
            return false
        }
        position += count
        return true
    }

    /// The offset of the first byte that is not well-formed UTF-8, or nil. Decodes in place,
    /// without copying the text.
    private static func firstInvalidUTF8Offset(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): offset += encoded.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }
}

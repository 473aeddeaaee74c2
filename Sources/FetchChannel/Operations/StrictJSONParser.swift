import DeviceSigning
import Foundation

/// Parses JSON text into ``JSONValue`` in one pass, strictly: the parser of the operations answer.
///
/// Why a parser of its own: `JSONDecoder` spent most of the fetch client's CPU on an answer of
/// twenty operations (a `Decodable` tree, and `JSONValue` trying each type through throwing
/// calls); this reads the bytes once and builds the values directly (docs/ARCHITECTURE.md,
/// "Invariants": every JSON text is checked as strictly as the JWS header).
///
/// What it accepts is RFC 8259 JSON text in UTF-8 and nothing more: no BOM, comments, trailing
/// commas, single quotes, leading zeros, `+`, `NaN` or trailing bytes; no unescaped control
/// character and no lone surrogate escape in a string; well-formed UTF-8 only. Beyond the syntax:
/// an object with two members of one name (compared after unescaping, as Swift strings, like
/// `StrictJSON`) is refused at every depth; nesting stops at ``maximumDepth``; a number without
/// fraction or exponent that fits in 64 bits is `.integer`, every other number `.number` and must
/// be finite as a `Double`.
package enum StrictJSONParser {
    /// The deepest nesting of arrays and objects accepted (Foundation's `JSONDecoder` stops at 512 too).
    package static let maximumDepth = 512

    /// Why a text was refused; `offset` is the byte where it stopped being acceptable.
    package enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        case notJSON(offset: Int)
        case duplicateMemberName(String, offset: Int)
        case tooDeep(offset: Int)
        case numberOutOfRange(offset: Int)

        package var description: String {
            switch self {
            case .notJSON(let offset):
                return "not JSON text (byte \(offset))"
            case .duplicateMemberName(let name, let offset):
                let shown = String(
                    String.UnicodeScalarView(
                        name.unicodeScalars.prefix(64).map {
                            $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "?" : $0
                        }))
                return "the member \"\(shown)\" appears more than once in one object (byte \(offset))"
            case .tooDeep(let offset):
                return "nested deeper than \(StrictJSONParser.maximumDepth) arrays and objects (byte \(offset))"
            case .numberOutOfRange(let offset):
                return "a number too large for a 64-bit floating point value (byte \(offset))"
            }
        }
    }

    /// The one value that `bytes` holds.
    package static func parse<Bytes: ContiguousBytes>(_ bytes: Bytes) throws(Failure) -> JSONValue {
        let outcome = bytes.withUnsafeBytes { buffer -> Result<JSONValue, Failure> in
            var reader = StrictJSONReader(bytes: buffer)
            do throws(Failure) {
                return .success(try reader.document())
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }
}

/// The cursor over the text. Recursive descent, bounded by ``StrictJSONParser/maximumDepth``.
private struct StrictJSONReader {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    private var notJSON: StrictJSONParser.Failure { .notJSON(offset: position) }

    mutating func document() throws(StrictJSONParser.Failure) -> JSONValue {
        let value = try value(depth: 0)
        skipWhitespace()
        guard position == bytes.count else { throw notJSON }
        return value
    }

    private mutating func value(depth: Int) throws(StrictJSONParser.Failure) -> JSONValue {
        skipWhitespace()
        guard position < bytes.count else { throw notJSON }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default: throw notJSON
        }
    }

    private mutating func object(depth: Int) throws(StrictJSONParser.Failure) -> JSONValue {
        guard depth <= StrictJSONParser.maximumDepth else { throw .tooDeep(offset: position) }
        position += 1
        var members = [String: JSONValue](minimumCapacity: 8)  // an operation's objects: no regrowth
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            let nameOffset = position
            guard peek() == UInt8(ascii: "\"") else { throw notJSON }
            let name = try string()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw notJSON }
            position += 1
            let member = try value(depth: depth)
            guard members.updateValue(member, forKey: name) == nil else {
                throw .duplicateMemberName(name, offset: nameOffset)
            }
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return .object(members)
            default: throw notJSON
            }
        }
    }

    private mutating func array(depth: Int) throws(StrictJSONParser.Failure) -> JSONValue {
        guard depth <= StrictJSONParser.maximumDepth else { throw .tooDeep(offset: position) }
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            elements.append(try value(depth: depth))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return .array(elements)
            default: throw notJSON
            }
        }
    }

    /// A string from its opening quote. Text without escapes is made from the bytes in place;
    /// anything but ASCII is checked to be well-formed UTF-8 first.
    private mutating func string() throws(StrictJSONParser.Failure) -> String {
        position += 1
        let start = position
        var isASCII = true
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeRawBufferPointer(rebasing: bytes[start..<position])
                position += 1
                if isASCII { return String(decoding: text, as: UTF8.self) }
                guard let checked = String(validating: text, as: UTF8.self) else { throw .notJSON(offset: start) }
                return checked
            }
            if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
            if byte < 0x20 { throw notJSON }
            if byte >= 0x80 { isASCII = false }
            position += 1
        }
        throw notJSON
    }

    /// The rest of a string that holds an escape, unescaped into a buffer from `start`.
    private mutating func escapedString(from start: Int) throws(StrictJSONParser.Failure) -> String {
        var decoded = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let checked = String(validating: decoded, as: UTF8.self) else { throw .notJSON(offset: start) }
                return checked
            case UInt8(ascii: "\\"):
                Unicode.UTF8.encode(try escape()) { decoded.append($0) }
            case 0..<0x20:
                position -= 1
                throw notJSON
            default:
                decoded.append(byte)
            }
        }
        throw notJSON
    }

    /// What follows a backslash. A `\u` high surrogate must be followed by a `\u` low one.
    private mutating func escape() throws(StrictJSONParser.Failure) -> Unicode.Scalar {
        guard let byte = peek() else { throw notJSON }
        position += 1
        if let character = JSONEscape.character(after: byte) { return character }
        switch byte {
        case UInt8(ascii: "u"):
            let unit = try hex4()
            if (0xDC00...0xDFFF).contains(unit) { throw notJSON }
            guard (0xD800...0xDBFF).contains(unit) else {
                guard let scalar = Unicode.Scalar(unit) else { throw notJSON }
                return scalar
            }
            let lowFollows =
                peek() == UInt8(ascii: "\\") && position + 1 < bytes.count
                && bytes[position + 1] == UInt8(ascii: "u")
            guard lowFollows else { throw notJSON }
            position += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low),
                let scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
            else { throw notJSON }
            return scalar
        default:
            position -= 1
            throw notJSON
        }
    }

    private mutating func hex4() throws(StrictJSONParser.Failure) -> UInt32 {
        guard position + 4 <= bytes.count else { throw notJSON }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = HexDigit.value(bytes[position]) else { throw notJSON }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`: an integer in 64 bits is read
    /// exactly; anything else through `Double`'s correctly rounded parser.
    private mutating func number() throws(StrictJSONParser.Failure) -> JSONValue {
        let start = position
        let negative = peek() == UInt8(ascii: "-")
        if negative { position += 1 }
        var magnitude: UInt64 = 0
        var fitsInteger = true
        if peek() == UInt8(ascii: "0") {
            position += 1
        } else {
            let digitsStart = position
            while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                let (times10, overflowA) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflowB) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                if overflowA || overflowB { fitsInteger = false }
                magnitude = sum
                position += 1
            }
            guard position > digitsStart else { throw notJSON }
        }
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            position += 1
            isInteger = false
            guard skipDigits() else { throw notJSON }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            position += 1
            isInteger = false
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard skipDigits() else { throw notJSON }
        }
        if isInteger, fitsInteger {
            if !negative, magnitude <= UInt64(Int64.max) { return .integer(Int64(magnitude)) }
            if negative, magnitude <= UInt64(Int64.max) + 1 {
                return .integer(Int64(truncatingIfNeeded: 0 &- magnitude))
            }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw .numberOutOfRange(offset: start) }
        return .number(double)
    }

    /// One or more decimal digits.
    private mutating func skipDigits() -> Bool {
        let start = position
        while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { position += 1 }
        return position > start
    }

    private mutating func literal(_ word: StaticString) throws(StrictJSONParser.Failure) {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw notJSON }
        for index in 0..<count where bytes[position + index] != word.utf8Start[index] {
            throw .notJSON(offset: position + index)
        }
        position += count
    }

    private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): position += 1
            default: return
            }
        }
    }
}

/// Finds duplicate member names in a JSON text, in any object at any depth (RFC 8259 §4 leaves
/// their meaning open; Foundation keeps the last one silently, so `{"alg":"x","alg":"y"}` could
/// mean different things to different readers). Names are compared after unescaping, so
/// `"alg"` and `"\u0061lg"` are the same name.
///
/// A minimal strict RFC 8259 scanner for the JWE header only, until the package's shared
/// duplicate-member JSON check replaces it. Text it cannot scan is `malformed`; nesting is
/// bounded so that hostile input cannot exhaust the stack.
enum JWEDuplicateMemberScan {
    enum Outcome: Equatable {
        case unique
        case duplicate(String)
        case malformed
    }

    static let maximumDepth = 16

    static func scan(_ json: [UInt8]) -> Outcome {
        var scanner = Scanner(bytes: json)
        do {
            scanner.skipWhitespace()
            try scanner.value(depth: 0)
            scanner.skipWhitespace()
            return scanner.index == json.count ? .unique : .malformed
        } catch Stop.duplicate(let name) {
            return .duplicate(name)
        } catch {
            return .malformed
        }
    }

    private enum Stop: Error {
        case malformed
        case duplicate(String)
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws {
            guard current == byte else { throw Stop.malformed }
            index += 1
        }

        mutating func value(depth: Int) throws {
            guard depth < JWEDuplicateMemberScan.maximumDepth, let byte = current else { throw Stop.malformed }
            switch byte {
            case UInt8(ascii: "{"): try object(depth: depth + 1)
            case UInt8(ascii: "["): try array(depth: depth + 1)
            case UInt8(ascii: "\""): _ = try string()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            default: try number()
            }
        }

        mutating func object(depth: Int) throws {
            var names = Set<String>()
            try elements(open: "{", close: "}") { scanner in
                let name = try scanner.string()
                guard names.insert(name).inserted else { throw Stop.duplicate(name) }
                scanner.skipWhitespace()
                try scanner.expect(UInt8(ascii: ":"))
                scanner.skipWhitespace()
                try scanner.value(depth: depth)
            }
        }

        mutating func array(depth: Int) throws {
            try elements(open: "[", close: "]") { scanner in try scanner.value(depth: depth) }
        }

        /// `open`, then zero or more `element`s separated by commas, then `close`.
        mutating func elements(
            open: Unicode.Scalar, close: Unicode.Scalar, _ element: (inout Scanner) throws -> Void
        ) throws {
            try expect(UInt8(ascii: open))
            skipWhitespace()
            if current == UInt8(ascii: close) {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                try element(&self)
                skipWhitespace()
                if current == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: close))
                return
            }
        }

        mutating func literal(_ word: StaticString) throws {
            let text = word.withUTF8Buffer { Array($0) }
            guard index + text.count <= bytes.count, Array(bytes[index..<(index + text.count)]) == text else {
                throw Stop.malformed
            }
            index += text.count
        }

        /// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
        mutating func number() throws {
            if current == UInt8(ascii: "-") { index += 1 }
            if current == UInt8(ascii: "0") {
                index += 1
            } else {
                guard digits() > 0 else { throw Stop.malformed }
            }
            if current == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw Stop.malformed }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw Stop.malformed }
            }
        }

        mutating func digits() -> Int {
            let start = index
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
            return index - start
        }

        /// A string literal, unescaped (invalid UTF-8 and lone surrogates become U+FFFD, which
        /// can only make two names compare equal, never hide a duplicate).
        mutating func string() throws -> String {
            try expect(UInt8(ascii: "\""))
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw.removeAll(keepingCapacity: true)
            }
            while true {
                guard let byte = current else { throw Stop.malformed }
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    flush()
                    scalars.append(try escape())
                case 0x00..<0x20:
                    throw Stop.malformed
                default:
                    raw.append(byte)
                }
            }
        }

        /// The character after a backslash; `\uXXXX` pairs surrogates.
        mutating func escape() throws -> Unicode.Scalar {
            guard let byte = current else { throw Stop.malformed }
            index += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return Unicode.Scalar(byte)
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let unit = try hex4()
                if (0xD800..<0xDC00).contains(unit), current == UInt8(ascii: "\\"),
                   index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") {
                    let mark = index
                    index += 2
                    let low = try hex4()
                    if (0xDC00..<0xE000).contains(low) {
                        return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) ?? "\u{FFFD}"
                    }
                    index = mark
                }
                return Unicode.Scalar(unit) ?? "\u{FFFD}"
            default:
                throw Stop.malformed
            }
        }

        mutating func hex4() throws -> UInt32 {
            guard index + 4 <= bytes.count else { throw Stop.malformed }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw Stop.malformed
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }
    }
}

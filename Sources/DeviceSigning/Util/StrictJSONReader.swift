/// One pass over UTF-8 JSON text with an explicit stack of open containers (no recursion), telling
/// its ``StrictJSONSink`` what it reads; ``StrictJSON`` states what is accepted.
///
/// Strings without escapes are made from the bytes in place, and only text that is not ASCII is
/// checked to be well-formed UTF-8. A sink that does not read values gets no copy of them.
struct StrictJSONReader<Sink: StrictJSONSink> {
    /// What a `\u` escape of a lone surrogate (one not part of a high-low pair) stands for.
    enum LoneSurrogates {
        /// U+FFFD (the names of a text that Foundation, which refuses it, reads next).
        case replaced
        /// Not JSON text that a value can be made of.
        case refused
    }

    private let bytes: UnsafeRawBufferPointer
    private let maximumDepth: Int
    private let loneSurrogates: LoneSurrogates
    private var position = 0
    /// One entry per open container, innermost last: true for an object, false for an array.
    private var open: [Bool] = []
    /// Long strings already read in this text, by their raw bytes.
    private var repeated = RepeatedStrings()
    /// Last, so that the fields above keep fixed offsets where the reader runs unspecialised (with
    /// a sink of another module, which Swift does not specialise it for).
    private(set) var sink: Sink

    init(bytes: UnsafeRawBufferPointer, sink: Sink, maximumDepth: Int, loneSurrogates: LoneSurrogates) {
        self.bytes = bytes
        self.sink = sink
        self.maximumDepth = maximumDepth
        self.loneSurrogates = loneSurrogates
    }

    /// Hands the sink over by exchange: copying a full sink out would retain everything it read
    /// only for the reader to release it again (a JWE header's reader holds a dozen values).
    mutating func swapSink(with other: inout Sink) {
        swap(&sink, &other)
    }

    private var notJSON: StrictJSON.Violation { .notJSON(offset: position) }

    /// Reads the whole text: one value, then nothing but whitespace.
    mutating func read() throws(StrictJSON.Violation) {
        while true {
            // A value starts here.
            skipWhitespace()
            guard position < bytes.count else { throw notJSON }
            switch bytes[position] {
            case UInt8(ascii: "{"):
                try enter(object: true)
                skipWhitespace()
                if peek() == UInt8(ascii: "}") {
                    position += 1
                    try leave()
                } else {
                    try memberName()
                    continue
                }
            case UInt8(ascii: "["):
                try enter(object: false)
                skipWhitespace()
                if peek() == UInt8(ascii: "]") {
                    position += 1
                    try leave()
                } else {
                    continue
                }
            case UInt8(ascii: "\""):
                if Sink.readsSecretStrings, sink.nextStringIsSecret {
                    // Checked as every string is (escapes, surrogates, UTF-8), in place, never copied.
                    let opening = position
                    try skipString()
                    let raw = UnsafeRawBufferPointer(rebasing: bytes[(opening + 1)..<(position - 1)])
                    try sink.secretString(raw: raw, isEscaped: raw.contains(UInt8(ascii: "\\")))
                } else if Sink.readsValues, sink.wantsNextValue {
                    try sink.scalar(.string(try string()))
                } else {
                    try skipString()
                }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                try number()
            case UInt8(ascii: "t"):
                try literal("true", .bool(true))
            case UInt8(ascii: "f"):
                try literal("false", .bool(false))
            case UInt8(ascii: "n"):
                try literal("null", .null)
            default:
                throw notJSON
            }
            // A value ended: close containers until one continues with another element.
            while true {
                skipWhitespace()
                guard let isObject = open.last else {
                    guard position == bytes.count else { throw notJSON }
                    return
                }
                guard position < bytes.count else { throw notJSON }
                let byte = bytes[position]
                if byte == UInt8(ascii: ",") {
                    position += 1
                    if isObject { try memberName() }
                    break
                }
                guard byte == UInt8(ascii: isObject ? "}" : "]") else { throw notJSON }
                position += 1
                try leave()
            }
        }
    }

    // MARK: Containers

    private mutating func enter(object: Bool) throws(StrictJSON.Violation) {
        guard open.count < maximumDepth else { throw .tooDeep(offset: position, limit: maximumDepth) }
        position += 1
        open.append(object)
        if object { sink.beginObject() } else { sink.beginArray() }
    }

    private mutating func leave() throws(StrictJSON.Violation) {
        if open.removeLast() { try sink.endObject() } else { try sink.endArray() }
    }

    /// Reads `"name" :` in the innermost object.
    private mutating func memberName() throws(StrictJSON.Violation) {
        skipWhitespace()
        guard peek() == UInt8(ascii: "\"") else { throw notJSON }
        if Sink.readsASCIIMemberNames {
            let scanned = try scanString()
            if scanned.isASCII, !scanned.isEscaped {
                try sink.memberName(ascii: UnsafeRawBufferPointer(rebasing: bytes[scanned.raw]))
            } else {
                try sink.memberName(try string(scanned))
            }
        } else {
            try sink.memberName(try string())
        }
        skipWhitespace()
        guard peek() == UInt8(ascii: ":") else { throw notJSON }
        position += 1
    }

    // MARK: Strings

    /// A string from its opening quote, unescaped. Text without escapes is made from the bytes in
    /// place; text with escapes is unescaped straight into the string's storage. A long string
    /// (one that needs storage of its own) whose raw bytes were already read in this text is the
    /// same string again: member names and most values repeat in every element of an array.
    private mutating func string() throws(StrictJSON.Violation) -> String {
        try string(try scanString())
    }

    /// Where a string's raw bytes (between the quotes) are, and what they hold.
    private struct ScannedString {
        let raw: Range<Int>
        let isASCII: Bool
        let isEscaped: Bool
    }

    /// A string from its opening quote to after its closing one. Escapes are skipped here and
    /// checked when the string is made.
    private mutating func scanString() throws(StrictJSON.Violation) -> ScannedString {
        position += 1
        let start = position
        var isASCII = true
        var isEscaped = false
        while position < bytes.count {
            if position + 8 <= bytes.count {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self))
                let special = Self.specialBytes(word)
                if special == 0 {
                    position += 8
                    continue
                }
                position += special.trailingZeroBitCount >> 3  // to the first byte that needs a look
            }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                isEscaped = true
                position += 2  // the escape itself is checked when it is unescaped
                continue
            }
            if byte < 0x20 { throw notJSON }
            if byte >= 0x80 { isASCII = false }
            position += 1
        }
        guard position < bytes.count else { throw notJSON }
        position += 1
        return ScannedString(raw: start..<(position - 1), isASCII: isASCII, isEscaped: isEscaped)
    }

    /// Eight bytes of a string, the first in the lowest byte: zero when they hold no quote, no
    /// backslash, no control character and nothing but ASCII (a string's common case, skipped
    /// eight at a time); otherwise the lowest high bit set is that of the first byte that is one
    /// of those. Bytes after it may be flagged wrongly (a borrow runs on), never bytes before it.
    private static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        /// A high bit set in the lowest byte that is zero (for ASCII bytes), none when none is.
        func zeroBytes(_ value: UInt64) -> UInt64 { (value &- ones) & ~value & highBits }
        let quote = zeroBytes(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
        let backslash = zeroBytes(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
        let control = (word &- ones &* 0x20) & ~word & highBits  // from the lowest byte below 0x20
        return (word & highBits) | quote | backslash | control
    }

    /// The string that ``scanString()`` found.
    private mutating func string(_ scanned: ScannedString) throws(StrictJSON.Violation) -> String {
        let (start, isASCII, isEscaped) = (scanned.raw.lowerBound, scanned.isASCII, scanned.isEscaped)
        let raw = UnsafeRawBufferPointer(rebasing: bytes[scanned.raw])
        let isLong = Sink.remembersRepeatedStrings && raw.count > Self.longStringBytes
        if isLong, let known = repeated.text(for: raw) { return known }
        let text: String
        if !isEscaped {
            if isASCII {
                text = String(decoding: raw, as: UTF8.self)
            } else {
                guard let checked = String(validating: raw, as: UTF8.self) else { throw .notJSON(offset: start) }
                text = checked
            }
        } else {
            if !isASCII, let invalid = Self.firstInvalidUTF8Offset(raw) { throw .notJSON(offset: start + invalid) }
            text = try unescaped(from: start, count: raw.count)
        }
        if isLong { repeated.remember(raw, as: text) }
        return text
    }

    /// The bytes of a string above which Swift gives it storage of its own.
    private static var longStringBytes: Int { 15 }

    /// The string of the `count` raw bytes from `start`, which hold escapes and are well-formed
    /// UTF-8: unescaped into the string's storage (never longer than the raw bytes).
    private mutating func unescaped(from start: Int, count: Int) throws(StrictJSON.Violation) -> String {
        let end = position
        position = start
        defer { position = end }
        do {
            return try String(unsafeUninitializedCapacity: count) { buffer in
                var written = 0
                var run = start
                while position < start + count {
                    guard bytes[position] == UInt8(ascii: "\\") else {
                        position += 1
                        continue
                    }
                    let length = position - run
                    UnsafeMutableRawBufferPointer(
                        rebasing: UnsafeMutableRawBufferPointer(buffer)[written..<(written + length)]
                    ).copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[run..<position]))
                    written += length
                    position += 1
                    Unicode.UTF8.encode(try escape()) { unit in
                        buffer[written] = unit
                        written += 1
                    }
                    run = position
                }
                let length = start + count - run
                UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[written...])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[run..<(start + count)]))
                return written + length
            }
        } catch let violation as StrictJSON.Violation {
            throw violation
        } catch {
            throw .notJSON(offset: start)
        }
    }

    /// Checks a string from its opening quote without copying it: a value that may be a secret.
    /// Escapes are plain ASCII, so the raw bytes are well-formed UTF-8 exactly when the
    /// unescaped text is.
    private mutating func skipString() throws(StrictJSON.Violation) {
        position += 1
        let start = position
        var isASCII = true
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                let text = UnsafeRawBufferPointer(rebasing: bytes[start..<(position - 1)])
                if !isASCII, let invalid = Self.firstInvalidUTF8Offset(text) {
                    throw .notJSON(offset: start + invalid)
                }
                return
            case UInt8(ascii: "\\"):
                _ = try escape()
            case 0..<0x20:
                position -= 1
                throw notJSON
            case 0x80...:
                isASCII = false
            default:
                break
            }
        }
        throw notJSON
    }

    /// What follows a backslash. A `\u` high surrogate followed by a `\u` low one is one scalar;
    /// a lone surrogate is U+FFFD or refused (``LoneSurrogates``).
    private mutating func escape() throws(StrictJSON.Violation) -> Unicode.Scalar {
        guard let byte = peek() else { throw notJSON }
        position += 1
        if let character = JSONEscape.character(after: byte) { return character }
        guard byte == UInt8(ascii: "u") else {
            position -= 1
            throw notJSON
        }
        let unit = try hex4()
        if let scalar = Unicode.Scalar(unit) { return scalar }  // not a surrogate
        if (0xD800...0xDBFF).contains(unit), peek() == UInt8(ascii: "\\"),
            position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u")
        {
            let mark = position
            position += 2
            let low = try hex4()
            if (0xDC00...0xDFFF).contains(low),
                let pair = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
            {
                return pair
            }
            position = mark  // not a pair: the second escape is read on its own
        }
        guard loneSurrogates == .replaced else { throw notJSON }
        return "\u{FFFD}"
    }

    private mutating func hex4() throws(StrictJSON.Violation) -> UInt32 {
        guard position + 4 <= bytes.count else { throw notJSON }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = HexDigit.value(bytes[position]) else { throw notJSON }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// The offset of the first byte that is not well-formed UTF-8, or nil. Decodes in place.
    private static func firstInvalidUTF8Offset(_ text: UnsafeRawBufferPointer) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = text.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): offset += encoded.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    // MARK: Numbers and literals

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`. For a sink that reads values, an
    /// integer in 64 bits is read exactly, anything else through `Double`'s correctly rounded parser.
    private mutating func number() throws(StrictJSON.Violation) {
        let start = position
        let negative = peek() == UInt8(ascii: "-")
        if negative { position += 1 }
        var magnitude: UInt64 = 0
        var fitsInteger = true
        if peek() == UInt8(ascii: "0") {
            position += 1
        } else {
            let digitsStart = position
            while position < bytes.count, case let digit = bytes[position] &- UInt8(ascii: "0"), digit < 10 {
                let (times10, overflowA) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflowB) = times10.addingReportingOverflow(UInt64(digit))
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
        guard Sink.readsValues, sink.wantsNextValue else { return }
        if !isInteger, Sink.readsIntegralLiteralsAsIntegers,
            let exact = ExactIntegerLiteral.value(of: UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
        {
            return try sink.scalar(.integer(exact))
        }
        if isInteger, fitsInteger {
            if !negative, magnitude <= UInt64(Int64.max) { return try sink.scalar(.integer(Int64(magnitude))) }
            if negative, magnitude <= UInt64(Int64.max) + 1 {
                return try sink.scalar(.integer(Int64(truncatingIfNeeded: 0 &- magnitude)))
            }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw .numberOutOfRange(offset: start) }
        try sink.scalar(.number(double))
    }

    /// One or more decimal digits.
    private mutating func skipDigits() -> Bool {
        let start = position
        while position < bytes.count, bytes[position] &- UInt8(ascii: "0") < 10 { position += 1 }
        return position > start
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) throws(StrictJSON.Violation) {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw notJSON }
        for index in 0..<count where bytes[position + index] != word.utf8Start[index] {
            throw .notJSON(offset: position + index)
        }
        position += count
        if Sink.readsValues, sink.wantsNextValue { try sink.scalar(value) }
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

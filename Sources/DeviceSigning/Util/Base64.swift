/// Strict base64 (RFC 4648 §4) and base64url (§5) codecs.
///
/// Strict means: only the alphabet's characters; padding exactly as the variant requires
/// (standard: padded to a multiple of 4; url: no padding at all); and the unused low bits of the
/// last character zero, so every byte string has exactly one accepted encoding.
enum Base64 {
    enum Alphabet {
        case standard
        case url
    }

    private static let standardTable = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlTable = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let standardReverse = reverseTable(standardTable)
    private static let urlReverse = reverseTable(urlTable)

    /// For whole groups of four characters: the value of the k-th character already shifted into
    /// its place in the 24-bit group (18, 12, 6, 0 bits), so a group is four lookups OR-ed; a
    /// character outside the alphabet has bit 31 set. A third faster than shifting each value.
    private static let standardShifted = shiftedTables(standardTable)
    private static let urlShifted = shiftedTables(urlTable)

    /// For long base64url inputs (a JWE's ciphertext): the 12 bits of two characters at once,
    /// indexed by the first character's byte plus 256 times the second's (two bytes as read from
    /// memory, lowest first); bit 31 set when either is outside the alphabet. Two halves: the
    /// first pair of a group already shifted into place, then the second, so a group is two
    /// lookups OR-ed and its error bit one test (a third fewer instructions than shifting). Of
    /// its 512 KiB only the 4,096 pairs of the alphabet are read, about 40 KiB of cache lines.
    /// The standard alphabet (PEM bodies, a few hundred characters) does without.
    private static let urlPairs = pairTable(urlTable)

    private static func pairTable(_ table: [UInt8]) -> [UInt32] {
        var pairs = [UInt32](repeating: 0x8000_0000, count: 2 << 16)
        for (firstValue, first) in table.enumerated() {
            for (secondValue, second) in table.enumerated() {
                let value = UInt32(firstValue) << 6 | UInt32(secondValue)
                pairs[Int(first) | Int(second) << 8] = value << 12
                pairs[1 << 16 | Int(first) | Int(second) << 8] = value
            }
        }
        return pairs
    }

    private static func shiftedTables(_ table: [UInt8]) -> [UInt32] {
        var shifted = [UInt32](repeating: 0x8000_0000, count: 4 * 256)
        for k in 0..<4 {
            for (index, character) in table.enumerated() {
                shifted[k * 256 + Int(character)] = UInt32(index) << UInt32(18 - 6 * k)
            }
        }
        return shifted
    }

    private static func reverseTable(_ table: [UInt8]) -> [UInt8] {
        var reverse = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in table.enumerated() { reverse[Int(character)] = UInt8(index) }
        return reverse
    }

    static func encode<Bytes: Collection>(_ bytes: Bytes, alphabet: Alphabet) -> String where Bytes.Element == UInt8 {
        String(decoding: encodeToBytes(bytes, alphabet: alphabet), as: UTF8.self)
    }

    static func encodeToBytes<Bytes: Collection>(_ bytes: Bytes, alphabet: Alphabet) -> [UInt8]
    where Bytes.Element == UInt8 {
        let count = encodedCount(bytes.count, alphabet: alphabet)
        return [UInt8](uninitializedCount: count) { output, initialized in
            initialized = encode(bytes, alphabet: alphabet, into: UnsafeMutableRawBufferPointer(output))
        }
    }

    /// The length of the encoding of `count` bytes: padded to a multiple of 4 (standard), or
    /// without padding (url).
    static func encodedCount(_ count: Int, alphabet: Alphabet) -> Int {
        alphabet == .standard ? (count + 2) / 3 * 4 : (count * 4 + 2) / 3
    }

    /// Writes the encoding of `bytes` at the start of `output`, which holds at least
    /// `encodedCount(bytes.count, alphabet:)` bytes, and returns that count. Writing in place lets
    /// secret input (a private scalar, a private key's DER) be encoded straight into `SecureBytes`.
    @discardableResult
    static func encode<Bytes: Collection>(
        _ bytes: Bytes, alphabet: Alphabet, into output: UnsafeMutableRawBufferPointer
    ) -> Int where Bytes.Element == UInt8 {
        let table = alphabet == .standard ? standardTable : urlTable
        precondition(output.count >= encodedCount(bytes.count, alphabet: alphabet), "Base64 output buffer too small")
        var written = 0
        func put(_ character: UInt8) {
            output[written] = character
            written += 1
        }
        var iterator = bytes.makeIterator()
        while let b0 = iterator.next() {
            let b1 = iterator.next()
            let b2 = iterator.next()
            put(table[Int(b0 >> 2)])
            put(table[Int(((b0 & 0x03) << 4) | ((b1 ?? 0) >> 4))])
            if let b1 {
                put(table[Int(((b1 & 0x0F) << 2) | ((b2 ?? 0) >> 6))])
            } else if alphabet == .standard {
                put(UInt8(ascii: "="))
            }
            if let b2 {
                put(table[Int(b2 & 0x3F)])
            } else if alphabet == .standard {
                put(UInt8(ascii: "="))
            }
        }
        return written
    }

    static func decode(_ text: String, alphabet: Alphabet) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(UnsafeRawBufferPointer($0), alphabet: alphabet) }
    }

    /// Decodes `input`, or nil if it is not the strict encoding of some byte string.
    static func decode<Bytes: Collection>(_ input: Bytes, alphabet: Alphabet) -> [UInt8]? where Bytes.Element == UInt8 {
        if let decoded = input.withContiguousStorageIfAvailable({
            decode(UnsafeRawBufferPointer($0), alphabet: alphabet)
        }) {
            return decoded
        }
        var characters = Array(input)
        // The input may be the body of an unencrypted private key: clear the working copy.
        defer { secureZero(&characters) }
        return characters.withUnsafeBytes { decode($0, alphabet: alphabet) }
    }

    /// Decodes `input` in place of any copy: four characters at a time into the output, which is
    /// allocated once (a JWE's ciphertext is most of an encrypted answer).
    ///
    /// `vectorized: false` leaves out the shim's AVX2 runs, so that tests reach the portable
    /// loops on every machine.
    static func decode(_ input: UnsafeRawBufferPointer, alphabet: Alphabet, vectorized: Bool = true) -> [UInt8]? {
        guard let layout = Layout(of: input, alphabet: alphabet) else { return nil }
        var valid = false
        let output = [UInt8](uninitializedCount: layout.outputCount) { output, initialized in
            valid = decode(input, layout, alphabet, vectorized: vectorized, into: UnsafeMutableRawBufferPointer(output))
            initialized = layout.outputCount
        }
        return valid ? output : nil
    }

    /// How many bytes `input` decodes to, or nil for a length no strict encoding has (its
    /// characters are checked by the decoding).
    static func decodedCount(of input: UnsafeRawBufferPointer, alphabet: Alphabet) -> Int? {
        Layout(of: input, alphabet: alphabet)?.outputCount
    }

    /// Decodes `input` straight into `output` (a coordinate into its place in a point): true when
    /// `input` is the strict encoding of exactly `output.count` bytes. On false, `output` holds
    /// whatever was decoded and is not to be used.
    static func decode(
        _ input: UnsafeRawBufferPointer, alphabet: Alphabet, into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard let layout = Layout(of: input, alphabet: alphabet), layout.outputCount == output.count else {
            return false
        }
        return decode(input, layout, alphabet, vectorized: true, into: output)
    }

    /// Decodes a secret (a private JWK's `d`, an unencrypted private key's PEM body) into
    /// `output`, with the result of `decode(_:alphabet:into:)`, but without tables: the decoders
    /// above read tables at offsets chosen by the characters, so the cache lines they touch
    /// follow the secret. Here each character's value is computed with the same instructions
    /// whatever it is; only the length and the padding, which are public, choose a path.
    static func decodeSecret(
        _ input: UnsafeRawBufferPointer, alphabet: Alphabet, into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard let layout = Layout(of: input, alphabet: alphabet), layout.outputCount == output.count else {
            return false
        }
        let symbols: (UInt32, UInt32) = alphabet == .standard ? (0x2B, 0x2F) : (0x2D, 0x5F)  // + / or - _
        var invalid: UInt32 = 0  // bit 8 of any character's value: outside the alphabet
        var written = 0
        var index = 0
        while index < layout.whole {
            let values = (
                secretValue(input[index], symbols), secretValue(input[index + 1], symbols),
                secretValue(input[index + 2], symbols), secretValue(input[index + 3], symbols)
            )
            invalid |= values.0 | values.1 | values.2 | values.3
            let word =
                (values.0 & 63) << 18 | (values.1 & 63) << 12 | (values.2 & 63) << 6 | (values.3 & 63)
            output[written] = UInt8(truncatingIfNeeded: word >> 16)
            output[written + 1] = UInt8(truncatingIfNeeded: word >> 8)
            output[written + 2] = UInt8(truncatingIfNeeded: word)
            written += 3
            index += 4
        }
        if layout.tail > 0 {
            let a = secretValue(input[index], symbols)
            let b = secretValue(input[index + 1], symbols)
            let c = layout.tail == 3 ? secretValue(input[index + 2], symbols) : 0
            invalid |= a | b | c
            let word = (a & 63) << 18 | (b & 63) << 12 | (c & 63) << 6
            output[written] = UInt8(truncatingIfNeeded: word >> 16)
            if layout.tail == 3 { output[written + 1] = UInt8(truncatingIfNeeded: word >> 8) }
            // Leftover bits must be zero; bit 31 of 0 - leftover says whether they are not.
            let leftover = layout.tail == 3 ? word & 0xFF : word & 0xFFFF
            invalid |= ((0 &- leftover) >> 31) << 8
        }
        return invalid & 0x100 == 0
    }

    /// The value (0...63) of the character `byte`, with bit 8 set when it is outside the
    /// alphabet whose two symbols are `symbols`: masks from wrapping subtractions, no branch.
    @inline(__always)
    private static func secretValue(_ byte: UInt8, _ symbols: (UInt32, UInt32)) -> UInt32 {
        let x = UInt32(byte)
        let upper = inRange(x, 0x41, 0x5A)
        let lower = inRange(x, 0x61, 0x7A)
        let digit = inRange(x, 0x30, 0x39)
        let first = inRange(x, symbols.0, symbols.0)
        let second = inRange(x, symbols.1, symbols.1)
        let value =
            (upper & (x &- 0x41)) | (lower & (x &- 0x47)) | (digit & (x &+ 4)) | (first & 62) | (second & 63)
        return value | (~(upper | lower | digit | first | second) & 0x100)
    }

    /// All ones when `low <= x <= high` (all three below 2^31), else zero: a subtraction that
    /// wraps sets bit 31.
    @inline(__always)
    private static func inRange(_ x: UInt32, _ low: UInt32, _ high: UInt32) -> UInt32 {
        (((x &- low) | (high &- x)) >> 31) &- 1
    }

    /// Where the characters of an encoding are: `whole` of them in groups of four, then a `tail`
    /// of 0, 2 or 3 (0, 1 or 2 more bytes); nil for a length no strict encoding has.
    private struct Layout {
        let whole: Int
        let tail: Int
        let outputCount: Int

        init?(of input: UnsafeRawBufferPointer, alphabet: Alphabet) {
            var count = input.count
            if alphabet == .standard {
                guard count % 4 == 0 else { return nil }
                // At most two padding characters, and only as many as the length needs (checked
                // by the leftover bits: a third `=` is not in the alphabet).
                while count > input.count - 2, count > 0, input[count - 1] == UInt8(ascii: "=") { count -= 1 }
            }
            guard count % 4 != 1 else { return nil }
            whole = count / 4 * 4
            tail = count - whole
            outputCount = whole / 4 * 3 + (tail == 0 ? 0 : tail - 1)
        }
    }

    /// The decoding of `input` laid out as `layout` into `output` (`layout.outputCount` bytes).
    private static func decode(
        _ input: UnsafeRawBufferPointer, _ layout: Layout, _ alphabet: Alphabet, vectorized: Bool,
        into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        let reverse = alphabet == .standard ? standardReverse : urlReverse
        let shifted = alphabet == .standard ? standardShifted : urlShifted
        return shifted.withUnsafeBufferPointer { shifted in
            reverse.withUnsafeBufferPointer { reverse in
                guard alphabet == .url, input.count >= 16 else {
                    let tables = Tables(shifted: shifted, reverse: reverse, pairs: nil, vectorized: false)
                    return decodeGroups(input, layout, into: output, tables)
                }
                return urlPairs.withUnsafeBufferPointer { pairs in
                    let tables = Tables(
                        shifted: shifted, reverse: reverse, pairs: pairs.baseAddress, vectorized: vectorized)
                    return decodeGroups(input, layout, into: output, tables)
                }
            }
        }
    }

    /// The decoding tables of one alphabet, lent for one call.
    private struct Tables {
        let shifted: UnsafeBufferPointer<UInt32>
        let reverse: UnsafeBufferPointer<UInt8>
        /// Only for base64url, and only lent for an input the eight-character loop can use.
        let pairs: UnsafePointer<UInt32>?
        /// Whether whole 32-character runs go to the shim's AVX2 decoder first (base64url only).
        let vectorized: Bool
    }

    /// The 24 bits of the group of four characters at `source`; bit 31 set when one of them is
    /// outside the alphabet. Each pair is loaded as it is in memory (a 16-bit load is cheaper
    /// than cutting a longer word apart).
    @inline(__always)
    private static func group(_ source: UnsafeRawPointer, _ pairs: UnsafePointer<UInt32>) -> UInt32 {
        let first = UInt16(littleEndian: source.loadUnaligned(as: UInt16.self))
        let second = UInt16(littleEndian: source.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        return pairs[Int(first)] | pairs[1 << 16 | Int(second)]
    }

    /// The loop of `decode(_:alphabet:)`: `whole` characters in groups of four, then the `tail`;
    /// false when a character is outside the alphabet or the leftover bits are not zero.
    private static func decodeGroups(
        _ input: UnsafeRawBufferPointer, _ layout: Layout, into output: UnsafeMutableRawBufferPointer,
        _ tables: Tables
    ) -> Bool {
        let (shifted, reverse) = (tables.shifted, tables.reverse)
        let (whole, tail, outputCount) = (layout.whole, layout.tail, layout.outputCount)
        var invalid: UInt8 = 0  // any 0xFF from the table: a character outside the alphabet
        var invalidGroup: UInt32 = 0  // bit 31 from a shifted table: the same
        var invalidPairs: UInt32 = 0  // bit 31 from the pair table: the same
        var written = 0
        var index = 0
        if tables.vectorized, let source = input.baseAddress, let target = output.baseAddress, whole >= 32,
            outputCount >= 32
        {
            // Thirty-two characters at a time into 24 bytes, written as 32 (so while 32 bytes of
            // output remain), where the CPU has AVX2; the loops below finish.
            let runs = min(whole / 32, (outputCount - 32) / 24 + 1)
            let (decoded, bad) = Self.decodeURLRuns(source, runs: runs, into: target)
            if bad { invalidPairs |= 0x8000_0000 }
            index = decoded * 32
            written = decoded * 24
        }
        if let source = input.baseAddress, let target = output.baseAddress, let pairs = tables.pairs,
            whole - index >= 8, outputCount - written >= 8
        {
            // Eight characters at a time, written as one word of which the six decoded bytes are
            // the first (so while eight bytes of output remain): half the stores of the loop
            // below, which finishes the last groups.
            let steps = min((whole - index) / 8, (outputCount - written - 8) / 6 + 1)
            for _ in 0..<steps {
                let first = Self.group(source + index, pairs)
                let second = Self.group(source + (index &+ 4), pairs)
                invalidPairs |= first | second
                // An invalid group's error bits spill into its neighbour here: the output is
                // unusable then anyway.
                let bytes = UInt64(first) << 40 | UInt64(second) << 16
                (target + written).storeBytes(of: bytes.bigEndian, as: UInt64.self)
                written &+= 6
                index &+= 8
            }
        }
        while index < whole {
            let word =
                shifted[Int(input[index])] | shifted[256 + Int(input[index + 1])]
                | shifted[512 + Int(input[index + 2])] | shifted[768 + Int(input[index + 3])]
            invalidGroup |= word
            output[written] = UInt8(truncatingIfNeeded: word >> 16)
            output[written + 1] = UInt8(truncatingIfNeeded: word >> 8)
            output[written + 2] = UInt8(truncatingIfNeeded: word)
            written += 3
            index += 4
        }
        if tail > 0 {
            let a = reverse[Int(input[index])]
            let b = reverse[Int(input[index + 1])]
            let c = tail == 3 ? reverse[Int(input[index + 2])] : 0
            invalid |= (a | b | c) & 0x80
            let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
            output[written] = UInt8(truncatingIfNeeded: word >> 16)
            written += 1
            if tail == 3 {
                output[written] = UInt8(truncatingIfNeeded: word >> 8)
                written += 1
            }
            // Leftover bits must be zero: otherwise two encodings would decode to the same bytes.
            let leftover = tail == 3 ? word & 0xFF : word & 0xFFFF
            if leftover != 0 { invalid |= 0x80 }
        }
        return invalid == 0 && invalidGroup & 0x8000_0000 == 0 && invalidPairs & 0x8000_0000 == 0
    }
}

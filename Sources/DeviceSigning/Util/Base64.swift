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
        return [UInt8](unsafeUninitializedCapacity: count) { output, initialized in
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
        var characters = Array(input)
        // The input may be the body of an unencrypted private key: clear the working copy.
        defer { secureZero(&characters) }
        if alphabet == .standard {
            guard characters.count % 4 == 0 else { return nil }
            var padding = 0
            while padding < 2, let last = characters.last, last == UInt8(ascii: "=") {
                characters.removeLast()
                padding += 1
            }
        }
        let reverse = alphabet == .standard ? standardReverse : urlReverse
        guard characters.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in characters {
            let value = reverse[Int(character)]
            guard value != 0xFF else { return nil }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((accumulator >> UInt32(bits)) & 0xFF))
            }
        }
        // Leftover bits must be zero: otherwise two encodings would decode to the same bytes.
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        if alphabet == .standard {
            // The padding removed must match exactly what the length needs.
            let expectedPadding = (4 - characters.count % 4) % 4
            guard expectedPadding == (input.count - characters.count) else { return nil }
        }
        return output
    }
}

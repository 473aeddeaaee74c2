import Foundation
import Testing

@testable import DeviceSigning

/// The table-driven decoder (the shim's AVX2 blocks where the CPU has them, a pair table eight
/// characters at a time, then groups, then the tail), with and without the AVX2 blocks, against
/// a plain one written from RFC 4648 for this test, on seeded random inputs: valid
/// encodings of every length up to a few groups of eight and a long one, each with a bad
/// character at every position, with non-canonical leftover bits, with a wrong length, and
/// random strings over the alphabet and its neighbours.
@Suite struct Base64EquivalenceTests {
    static let seeds: [UInt64] = [1, 0x5EED, 0xDEC0DE]

    /// RFC 4648 §4/§5, one character at a time: nil unless `text` is the one strict encoding of
    /// some bytes (only alphabet characters, padding exactly as the variant requires, zero
    /// leftover bits).
    static func reference(_ text: [UInt8], alphabet: Base64.Alphabet) -> [UInt8]? {
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        let table = letters + (alphabet == .url ? Array("-_".utf8) : Array("+/".utf8))
        var characters = text[...]
        if alphabet == .standard {
            guard text.count % 4 == 0 else { return nil }
            let padding = text.reversed().prefix { $0 == UInt8(ascii: "=") }.count
            guard padding <= 2 else { return nil }
            characters = text.dropLast(padding)
            guard padding == 0 || characters.count % 4 == 4 - padding else { return nil }
        }
        guard characters.count % 4 != 1 else { return nil }
        var bits: UInt32 = 0
        var bitCount = 0
        var output: [UInt8] = []
        for character in characters {
            guard let value = table.firstIndex(of: character) else { return nil }
            bits = bits << 6 | UInt32(value)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                output.append(UInt8(truncatingIfNeeded: bits >> UInt32(bitCount)))
                bits &= (1 << UInt32(bitCount)) - 1
            }
        }
        return bits == 0 ? output : nil
    }

    /// The decoder's result, which must be the same with and without the AVX2 blocks, and from
    /// the table-free decoder of secrets.
    static func decode(
        _ text: [UInt8], _ alphabet: Base64.Alphabet, sourceLocation: SourceLocation = #_sourceLocation
    ) -> [UInt8]? {
        let vectorized = text.withUnsafeBytes { Base64.decode($0, alphabet: alphabet) }
        let portable = text.withUnsafeBytes { Base64.decode($0, alphabet: alphabet, vectorized: false) }
        #expect(vectorized == portable, "\(text.count) characters", sourceLocation: sourceLocation)
        #expect(
            secret(text, alphabet) == vectorized, "secret, \(text.count) characters", sourceLocation: sourceLocation)
        return vectorized
    }

    /// `Base64.decodeSecret` into a buffer of the decoded length; nil when it refuses.
    static func secret(_ text: [UInt8], _ alphabet: Base64.Alphabet) -> [UInt8]? {
        text.withUnsafeBytes { input -> [UInt8]? in
            guard let count = Base64.decodedCount(of: input, alphabet: alphabet) else { return nil }
            var output = [UInt8](repeating: 0, count: count)
            let valid = output.withUnsafeMutableBytes { Base64.decodeSecret(input, alphabet: alphabet, into: $0) }
            return valid ? output : nil
        }
    }

    static func randomBytes(_ count: Int, _ random: inout SplitMix64) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &random) }
    }

    /// Lengths around every boundary of the decoder's loops, and a JWE ciphertext's.
    static let lengths = Array(0...70) + [95, 96, 97, 7_376]

    @Test(arguments: seeds)
    func validEncodingsDecodeAsTheReference(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for count in Self.lengths {
            let bytes = Self.randomBytes(count, &random)
            for alphabet in [Base64.Alphabet.url, .standard] {
                let text = Base64.encodeToBytes(bytes, alphabet: alphabet)
                #expect(Self.reference(text, alphabet: alphabet) == bytes, "reference, \(count) bytes")
                #expect(Self.decode(text, alphabet) == bytes, "\(alphabet), \(count) bytes, seed \(seed)")
            }
        }
    }

    /// Every position of an encoding long enough for the eight-character loop, each replaced by
    /// a random byte outside the alphabet.
    @Test(arguments: seeds)
    func aBadCharacterAtEveryPositionIsRefused(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let urlAlphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let outside = (0...255).map(UInt8.init).filter { !urlAlphabet.contains($0) }
        for count in [1, 2, 3, 6, 7, 8, 12, 13, 14, 40, 41, 42] + [Int.random(in: 43...300, using: &random), 7_376] {
            let text = Base64.encodeToBytes(Self.randomBytes(count, &random), alphabet: .url)
            // Every position; of a JWE ciphertext's length, the first and last blocks and 200 more.
            let positions =
                count < 1_000
                ? Array(text.indices)
                : Array(0..<40) + Array(text.count - 40..<text.count)
                    + (0..<200).map { _ in Int.random(in: 0..<text.count, using: &random) }
            for index in positions {
                var altered = text
                altered[index] = outside.randomElement(using: &random) ?? 0
                #expect(Self.decode(altered, .url) == nil, "byte \(altered[index]) at \(index) of \(count)")
                #expect(Self.reference(altered, alphabet: .url) == nil)
            }
        }
    }

    /// The last character of an encoding whose tail has leftover bits, with those bits non-zero.
    @Test(arguments: seeds)
    func nonCanonicalLeftoverBitsAreRefused(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for count in Self.lengths where count % 3 != 0 {
            var text = Base64.encodeToBytes(Self.randomBytes(count, &random), alphabet: .url)
            let leftoverBits = count % 3 == 1 ? 4 : 2
            guard let last = text.last, let value = letters.firstIndex(of: last) else {
                Issue.record("no last character")
                return
            }
            let noise = Int.random(in: 1..<(1 << leftoverBits), using: &random)
            text[text.count - 1] = letters[value | noise]
            #expect(Self.decode(text, .url) == nil, "\(count) bytes, noise \(noise)")
            #expect(Self.reference(text, alphabet: .url) == nil)
        }
    }

    /// Lengths no strict encoding has (4n + 1), and padding, which base64url never has.
    @Test(arguments: seeds)
    func wrongLengthsAndPaddingAreRefused(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for count in Self.lengths {
            let text = Base64.encodeToBytes(Self.randomBytes(count, &random), alphabet: .url)
            let extra = Base64.encodeToBytes(Self.randomBytes(3, &random), alphabet: .url)
            for wrong in [text + extra.prefix(1), text + Array("=".utf8), text + Array("==".utf8)]
            where wrong.count % 4 == 1 || wrong.last == UInt8(ascii: "=") {
                #expect(Self.decode(wrong, .url) == nil, "\(wrong.count) characters")
                #expect(Self.reference(wrong, alphabet: .url) == nil)
            }
        }
    }

    /// Random strings over the alphabets, padding and a few bytes outside them: mostly refused,
    /// sometimes valid; the decoder agrees with the reference on each, for both variants.
    @Test(arguments: seeds)
    func randomStringsDecodeAsTheReference(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let pool = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=".utf8) + [0, 0x80, 0xFF]
        for _ in 0..<4_000 {
            let count = Int.random(in: 0...40, using: &random)
            // Mostly alphabet characters, so that some strings are valid and the rest fail late.
            let text = (0..<count).map { _ in
                Int.random(in: 0..<50, using: &random) == 0
                    ? pool.randomElement(using: &random) ?? 0 : pool[Int.random(in: 0..<64, using: &random)]
            }
            for alphabet in [Base64.Alphabet.url, .standard] {
                #expect(
                    Self.decode(text, alphabet) == Self.reference(text, alphabet: alphabet),
                    "\(String(decoding: text, as: UTF8.self)) (\(alphabet)), seed \(seed)")
            }
        }
    }
}

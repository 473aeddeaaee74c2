import FetchChannelTestSupport
import Foundation
import Testing

@testable import DeviceSigning

/// The strict codecs, against Foundation's for every length around a group boundary, and the
/// inputs they must refuse (the JWE parts, PEM bodies and JWK coordinates all go through them).
@Suite struct Base64Tests {
    @Test(arguments: 0..<40)
    func roundTripsAndAgreesWithFoundation(count: Int) throws {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 13) }
        let standard = Data(bytes).base64EncodedString()
        #expect(Base64.encode(bytes, alphabet: .standard) == standard)
        #expect(Base64.decode(standard, alphabet: .standard) == bytes)
        let url = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        #expect(Base64.encode(bytes, alphabet: .url) == url)
        #expect(Base64.decode(url, alphabet: .url) == bytes)
        #expect(Base64.decode(Array(url.utf8)[...], alphabet: .url) == bytes, "a slice, contiguous")
    }

    @Test(arguments: [
        "A", "AAAAA",  // a length no encoding has
        "AAA*", "*AAA", "AAAAAAA\u{0}", "AAAA AAA",  // outside the alphabet, in a group and in the tail
        "AB", "ABC", "AAB", "AAAAAAB",  // leftover bits not zero (AA, AAA, AAE decode; AB, AAB do not)
        "AA==", "AAA=", "+A", "/A",  // padding, or the standard alphabet, in base64url
    ])
    func urlRefuses(_ text: String) {
        #expect(Base64.decode(text, alphabet: .url) == nil)
    }

    /// A long encoding (a JWE ciphertext goes through the eight-characters-at-a-time loop, then
    /// the group loop and the tail) refuses a character outside the alphabet at every position.
    @Test func aLongEncodingRefusesABadCharacterAnywhere() {
        let bytes = (0..<50).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let valid = Array(Base64.encode(bytes, alphabet: .url).utf8)
        #expect(Base64.decode(valid, alphabet: .url) == bytes)
        for index in valid.indices {
            for bad: UInt8 in [0, UInt8(ascii: "="), UInt8(ascii: "+"), 0x80, 0xFF] {
                var text = valid
                text[index] = bad
                #expect(Base64.decode(text, alphabet: .url) == nil, "\(bad) at \(index)")
            }
        }
    }

    @Test(arguments: ["AA", "AAA", "AA=", "A===", "AB==", "AAB=", "AA==AA==", "-A==", "_A==", "AAA*"])
    func standardRefuses(_ text: String) {
        #expect(Base64.decode(text, alphabet: .standard) == nil)
    }

    /// Empty parts (an ECDH-ES JWE's encrypted key) decoded and encoded on two threads at once: the
    /// thread sanitizer run of the tests fails here if making an empty array writes shared storage.
    @Test func emptyPartsOnTwoThreadsAtOnce() async {
        let results = await DedicatedThreads.run(2) { _ in
            (0..<1_000).allSatisfy { _ in
                Base64.decode("", alphabet: .url) == [] && Base64.decode("", alphabet: .standard) == []
                    && Base64.encodeToBytes([UInt8](), alphabet: .url).isEmpty
            }
        }
        #expect(results == [true, true])
    }

    @Test func leftoverBitsZeroDecode() {
        #expect(Base64.decode("AA", alphabet: .url) == [0])
        #expect(Base64.decode("AAE", alphabet: .url) == [0, 1])
        #expect(Base64.decode("AQ==", alphabet: .standard) == [1])
    }
}

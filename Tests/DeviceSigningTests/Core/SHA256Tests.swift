import Foundation
import Testing

@testable import DeviceSigning

/// The shim's SHA-256 (an implementation fetched once) against FIPS 180-2's examples.
@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func knownDigests(message: String, hex: String) {
        let digest = Array(message.utf8).withUnsafeBytes { P256Backend.sha256($0) }
        #expect(digest.map { String(format: "%02x", $0) }.joined() == hex)
    }

    @Test func aBufferOfAnotherSizeIsRefused() {
        var short = [UInt8](repeating: 0, count: 31)
        let ok = short.withUnsafeMutableBytes { buffer in
            Array("abc".utf8).withUnsafeBytes { P256Backend.sha256($0, into: buffer) }
        }
        #expect(!ok)
        #expect(short.allSatisfy { $0 == 0 })
    }
}

import Foundation
import Testing

@testable import DeviceSigning

/// How the compact form is cut into its five parts: a dot more or less anywhere (also at either
/// end, or two in a row) is refused with the count of parts it has; exactly four dots parse.
@Suite struct CompactJWEPartsTests {
    @Test func aDotMoreOrLessIsRefusedWithThePartCount() throws {
        let key = try P256.KeyAgreement.PrivateKey()
        let compact = try JWE.encrypt(Data("twenty operations".utf8), to: key.publicKey)
        #expect(try JWE.decrypt(compact, with: key) == Data("twenty operations".utf8))
        let dots = compact.indices.filter { compact[$0] == "." }
        #expect(dots.count == 4)
        var variants: [(String, Int)] = [
            ("." + compact, 6), (compact + ".", 6), (compact + "..", 7), ("", 1), (".", 2), ("....", 5),
            (".....", 6),
        ]
        for dot in dots {
            var removed = compact
            removed.remove(at: dot)
            variants.append((removed, 4))
            var doubled = compact
            doubled.insert(".", at: dot)
            variants.append((doubled, 6))
        }
        for (text, parts) in variants {
            let error = expectError(.malformedJWE) { try CompactJWE(parsing: text) }
            if parts != 5 {
                #expect(
                    error?.description.contains("this one has \(parts).") == true,
                    "\(text): \(String(describing: error))")
            }
        }
    }

    /// Empty parts where they may be empty (the ECDH-ES encrypted key) parse; the same bytes
    /// parse from a String and from bytes.
    @Test func exactlyFivePartsParseFromTextAndBytes() throws {
        let key = try P256.KeyAgreement.PrivateKey()
        let compact = try JWE.encrypt(Data([1, 2, 3]), to: key.publicKey)
        #expect(compact.contains(".."), "ECDH-ES: the encrypted key is empty")
        let fromText = try CompactJWE(parsing: compact)
        let fromBytes = try CompactJWE(parsing: Array(compact.utf8))
        #expect(fromText.aad == fromBytes.aad && fromText.ciphertext == fromBytes.ciphertext)
        #expect(try fromBytes.plaintext(with: key) == Data([1, 2, 3]))
    }
}

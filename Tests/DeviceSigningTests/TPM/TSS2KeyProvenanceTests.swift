import Foundation
import Testing

@testable import DeviceSigning

/// A `TSS2 PRIVATE KEY` is checked for a key generated inside a TPM before any TPM is asked to
/// load it (no TPM needed here). The blob is one swtpm made with `openssl genpkey -provider tpm2`:
/// its private part is wrapped by that TPM's storage key and useless anywhere else.
@Suite struct TSS2KeyProvenanceTests {
    static let generated = Self.bytes(
        "3081f006066781050a0103a003010101020440000001045800560023000b000600720000001000100003001000205e362f3c"
            + "5d922599a9af7de29f38ad2f41460e116933162e3beee7b468c65fa20020dee97c6af23a50fed085cb7c81bb960520e8"
            + "171daf9559ab0f608ffabcd6f1e1048180007e0020c18724eb54155ef430a2e30ecda66cfe09e1b13c4fe3f37a4d1f67"
            + "3cacfeed360010d7914effb3862eab13d3bf9014c4559b97cd20ccee0e7fb7a210b8e6364c199a0653e1eedf92a6dd44"
            + "0fa199342adfc7aa1b3bc33bff9eedff9e4e074dc64671d1ee82feca89b1edf33c5a085cecc9e786589a803f893d67f01a")

    static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return result
    }

    /// `generated` with `pattern` (found once) replaced by `replacement` of the same length.
    static func patched(_ pattern: [UInt8], _ replacement: [UInt8]) throws -> [UInt8] {
        let starts = (0...(generated.count - pattern.count)).filter {
            Array(generated[$0..<($0 + pattern.count)]) == pattern
        }
        let start = try #require(starts.count == 1 ? starts.first : nil, "pattern found \(starts.count) times")
        var result = generated
        result.replaceSubrange(start..<(start + pattern.count), with: replacement)
        return result
    }

    static let attributes: [UInt8] = [0x00, 0x0B, 0x00, 0x06, 0x00, 0x72]  // nameAlg SHA-256, then 0x00060072

    @Test func aKeyTheTPMGeneratedPasses() throws {
        try TSS2KeyProvenance.check(der: Self.generated)
    }

    /// An imported key (TPM2_Import) never has fixedTPM; one whose private half the caller chose
    /// lacks sensitiveDataOrigin. Before, either loaded and was called hardware-bound.
    @Test(arguments: [
        ("fixedTPM", UInt8(0x70)), ("fixedParent", UInt8(0x62)), ("sensitiveDataOrigin", UInt8(0x52)),
    ])
    func aKeyNotGeneratedInsideATPMIsRefused(missing: String, lowByte: UInt8) throws {
        let der = try Self.patched(Self.attributes, Array(Self.attributes.dropLast()) + [lowByte])
        let error = expectError(.invalidKey) { try TSS2KeyProvenance.check(der: der) }
        #expect(error?.reason.contains("not generated inside a TPM") == true, "\(missing)")
        // Through the public entry: refused before any TPM is reached (this one has none).
        let pem = PEM.encode(label: P256.Signing.PrivateKey.tss2PEMLabel, der: der)
        expectError(.invalidKey) {
            _ = try P256.Signing.PrivateKey(
                tss2PEM: pem, tpm: TPMConfiguration(tcti: "swtpm:host=127.0.0.1,port=1", timeout: .seconds(5)))
        }
    }

    /// `generated` with the parent `handle` (a DER INTEGER: a leading zero when its top bit is set).
    static func withParent(_ handle: [UInt8]) throws -> [UInt8] {
        let owner: [UInt8] = [0x02, 0x04, 0x40, 0x00, 0x00, 0x01]
        let integer: [UInt8] = handle[0] & 0x80 != 0 ? [0x02, 0x05, 0x00] + handle : [0x02, 0x04] + handle
        let start = try #require(
            (0...(generated.count - owner.count)).first { Array(generated[$0..<($0 + owner.count)]) == owner })
        var der = generated
        der.replaceSubrange(start..<(start + owner.count), with: integer)
        // The outer SEQUENCE's length (30 81 F0) grows with the integer.
        try #require(der[0...2] == [0x30, 0x81, 0xF0])
        der[2] = UInt8(0xF0 + integer.count - owner.count)
        return der
    }

    /// Whether a persistent parent is in the TPM is the TPM's to check: such a key passes here.
    @Test func aKeyUnderAPersistentParentPassesTheCheck() throws {
        try TSS2KeyProvenance.check(der: try Self.withParent([0x81, 0x00, 0x00, 0x01]))
    }

    /// A parent that is neither the owner hierarchy nor a persistent key (the null hierarchy, the
    /// endorsement one, a transient handle, 0), or a name algorithm other than SHA-256, is a
    /// damaged file. Before, the TPM was asked and its refusal (a bad hierarchy, 0x184; a bad
    /// name algorithm, 0x2C3) named the TPM rather than the file; parent 0 even loaded.
    @Test(arguments: [
        [UInt8](arrayLiteral: 0x40, 0x00, 0x00, 0x07), [0x40, 0x00, 0x00, 0x0B], [0x80, 0x00, 0x00, 0x01],
        [0x00, 0x00, 0x00, 0x00],
    ])
    func anotherParentIsMalformed(parent: [UInt8]) throws {
        let der = try Self.withParent(parent)
        let error = expectError(.malformedEncoding) { try TSS2KeyProvenance.check(der: der) }
        #expect(error?.reason.contains("parent") == true, "\(error?.reason ?? "")")
    }

    @Test func aNameAlgorithmOtherThanSHA256IsMalformed() throws {
        let sha384: [UInt8] = [0x00, 0x0C] + Array(Self.attributes.dropFirst(2))
        let der = try Self.patched(Self.attributes, sha384)
        let error = expectError(.malformedEncoding) { try TSS2KeyProvenance.check(der: der) }
        #expect(error?.reason.contains("SHA-256") == true, "\(error?.reason ?? "")")
    }

    /// Such a key used to fail in the provider's password callback and was called garbled.
    @Test(arguments: [
        ("emptyAuth false", [UInt8](arrayLiteral: 0xA0, 0x03, 0x01, 0x01, 0x00), "an authorization value"),
        ("no emptyAuth, a policy", [0xA1, 0x03, 0x01, 0x01, 0x01], "an authorization value (a password) and a policy"),
        ("an authorization policy", [0xA3, 0x03, 0x01, 0x01, 0x01], "an authorization policy"),
    ])
    func aKeyThatNeedsAPasswordOrAPolicyIsRefusedAsSuch(
        what: String, member: [UInt8], named: String
    ) throws {
        let der = try Self.patched([0xA0, 0x03, 0x01, 0x01, 0x01], member)
        let error = expectError(.invalidKey) { try TSS2KeyProvenance.check(der: der) }
        #expect(error?.reason.contains(named) == true, "\(what): \(error?.reason ?? "")")
    }

    /// A member the provider does not read ([4], a description, here in place of emptyAuth) is
    /// the file's form, not a condition of the key's use.
    @Test func aMemberTheProviderDoesNotReadIsMalformed() throws {
        let der = try Self.patched([0xA0, 0x03, 0x01, 0x01, 0x01], [0xA4, 0x03, 0x0C, 0x01, 0x78])
        let error = expectError(.malformedEncoding) { try TSS2KeyProvenance.check(der: der) }
        #expect(error?.reason.contains("member [4]") == true, "\(error?.reason ?? "")")
    }

    @Test func otherBlobsAreMalformed() throws {
        // 2.23.133.10.1.4 (an importable key), a truncated blob, trailing bytes.
        let importable = try Self.patched(
            [0x67, 0x81, 0x05, 0x0A, 0x01, 0x03], [0x67, 0x81, 0x05, 0x0A, 0x01, 0x04])
        for der in [importable, Array(Self.generated.prefix(100)), Self.generated + [0x00]] {
            expectError(.malformedEncoding) { try TSS2KeyProvenance.check(der: der) }
        }
        let trailing = expectError(.malformedEncoding) { try TSS2KeyProvenance.check(der: Self.generated + [0x00]) }
        #expect(trailing?.reason.contains("bytes after the key") == true, "\(trailing?.reason ?? "")")
    }

    /// A key file is taken for a TPM key by the block that is read, the first: a software key
    /// followed by a TSS2 block is the software key it starts with, and never goes the TPM way,
    /// where its text was copied out unzeroed before its label was refused.
    @Test func aKeyFileIsATPMKeyByTheBlockThatIsRead() throws {
        let tss2 = PEM.encode(label: P256.Signing.PrivateKey.tss2PEMLabel, der: Self.generated)
        let software = try P256.Signing.PrivateKey().pemRepresentation.withUnsafeBytes {
            String(decoding: $0, as: UTF8.self)
        }
        func isTSS2(_ text: String) -> Bool { P256.Signing.PrivateKey.isTSS2PEM(SecureBytes(text.utf8)) }
        #expect(isTSS2(tss2))
        #expect(isTSS2("a comment line\n" + tss2))
        #expect(!isTSS2(software + tss2))
        #expect(!isTSS2(software))
        #expect(!isTSS2("-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n" + software))
        #expect(isTSS2("-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n" + tss2))
        // A damaged TPM key file is still one, and fails as a damaged TPM key, not as a software key.
        #expect(isTSS2("-----BEGIN TSS2 PRIVATE KEY-----\n"))
        expectError(.malformedEncoding) {
            _ = try P256.Signing.PrivateKey(
                tss2PEM: software + tss2,
                tpm: TPMConfiguration(tcti: "swtpm:host=127.0.0.1,port=1", timeout: .seconds(5)))
        }
    }
}

import DeviceSigning
import Foundation

/// `Vectors/jwe-ecdh-es.json`: RFC 7518 Appendix C's key agreement gives its Z and derived key;
/// every case decrypts with its named key to its plaintext, or fails with its expected
/// `DeviceSigningError` code.
public enum JWEVectors: VectorFileChecker {
    public static let fileName = "jwe-ecdh-es.json"
    public static let summary = "JWE ECDH-ES P-256, RFC 7518 C, RFC 7520 5.5, negatives"
    /// The file must hold at least this many cases: a file cut short fails rather than passes.
    public static let minimumCases = 20
    /// The longest part a `replacePart` may build (a little over the JWE limit of 1 MiB).
    static let maximumReplacementLength = 2 << 20

    public struct File: Decodable, Sendable {
        public let keys: [String: Key]
        public let rfc7518AppendixC: AppendixC
        public let cases: [Case]
    }
    /// A private P-256 JWK (TEST ONLY: published RFC examples).
    public struct Key: Decodable, Sendable {
        public let kty: String
        public let crv: String
        public let x: String
        public let y: String
        public let d: String
    }
    public struct AppendixC: Decodable, Sendable {
        public let ephemeralKey: String
        public let recipientKey: String
        public let algorithmID: String
        public let apu: String
        public let apv: String
        public let keyBits: Int
        public let sharedSecretZ: [UInt8]
        public let derivedKey: String
    }
    public struct Case: Decodable, Sendable {
        public let id: Int
        public let name: String
        public let key: String
        public let compact: String
        public let replacePart: ReplacePart?
        public let expected: Expected
        /// The ephemeral key, IV and (key wrapping) content key that reproduce `compact` exactly.
        public let encryptionInputs: EncryptionInputs?
    }
    /// Part `index` of `compact` is replaced by `length` copies of `fill` (for the size limits);
    /// `fill` is one ASCII character, so the part is `length` bytes.
    public struct ReplacePart: Decodable, Sendable {
        public let index: Int
        public let fill: String
        public let length: Int
    }
    /// Exactly one of the two: the UTF-8 plaintext, or the error code.
    public struct Expected: Decodable, Sendable {
        public let plaintext: String?
        public let error: String?
    }
    public struct EncryptionInputs: Decodable, Sendable {
        public let ephemeralD: String
        public let iv: String
        public let cek: String?
    }

    /// The case's compact serialization with `replacePart` applied; nil when that is unusable: no
    /// part `index`, a `length` outside 0...``maximumReplacementLength``, or a `fill` that is not
    /// exactly one ASCII byte. (One byte, not one `Character`: "a" and a thousand combining
    /// accents are one `Character` of 2,001 bytes, and the limit on `length` would bound nothing.)
    public static func compact(of vector: Case) -> String? {
        guard let replacement = vector.replacePart else { return vector.compact }
        var parts = vector.compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.indices.contains(replacement.index), replacement.fill.utf8.count == 1,
            let byte = replacement.fill.utf8.first, byte < 0x80,
            (0...maximumReplacementLength).contains(replacement.length)
        else { return nil }
        parts[replacement.index] = String(repeating: replacement.fill, count: replacement.length)
        return parts.joined(separator: ".")
    }

    /// The key named `name`, as a key-agreement private key.
    public static func privateKey(_ name: String, in file: File) throws -> P256.KeyAgreement.PrivateKey {
        guard let key = file.keys[name] else {
            throw VectorDecodingError(code: .unknownKey, reason: "no key named \(name)")
        }
        let members = ["kty": key.kty, "crv": key.crv, "x": key.x, "y": key.y, "d": key.d]
        return try P256.KeyAgreement.PrivateKey(jwkRepresentation: JSONSerialization.data(withJSONObject: members))
    }

    /// Decrypts; the plaintext or the `DeviceSigningError` code.
    static func outcome(_ compact: String, key: P256.KeyAgreement.PrivateKey) -> DeviceSigningOutcome {
        DeviceSigningOutcome { try JWE.decrypt(compact, with: key) }
    }

    public static func check(_ file: File, into report: inout VectorFileReport) {
        report.casesChecked += 1
        checkAppendixC(file, into: &report)
        report.checkEach(file.cases, atLeast: minimumCases, "cases") { vector, report in
            checkCase(vector, in: file, into: &report)
        }
    }

    /// RFC 7518 Appendix C's values, as the RFC prints them: the file's case must be the RFC's.
    enum RFC7518AppendixC {
        static let alice = (
            x: "gI0GAILBdu7T53akrFmMyGcsF3n5dO7MmwNBHKW5SV0", y: "SLW_xSffzlPWrHEVI30DHM_4egVwt3NQqeUD7nMFpps"
        )
        static let bob = (
            x: "weNJy2HscCSM6AEDTDg04biOvhFhyyWvOHQfeF_PxMQ", y: "e8lnCO-AlStT-NJVX-crhB7QRYhiix03illJOVAOyck"
        )
        static let sharedSecretZ: [UInt8] = [
            158, 86, 217, 29, 129, 113, 53, 211, 114, 131, 66, 131, 191, 132, 38, 156,
            251, 49, 110, 163, 218, 128, 106, 72, 246, 218, 167, 121, 140, 254, 144, 196,
        ]
        static let derivedKey = "VqqN6vgjbSBcIijNcacQGg"
    }

    static func checkAppendixC(_ file: File, into report: inout VectorFileReport) {
        let vector = file.rfc7518AppendixC
        let alice = file.keys[vector.ephemeralKey]
        let bob = file.keys[vector.recipientKey]
        report.expect(
            alice?.x == RFC7518AppendixC.alice.x && alice?.y == RFC7518AppendixC.alice.y
                && bob?.x == RFC7518AppendixC.bob.x && bob?.y == RFC7518AppendixC.bob.y,
            "RFC 7518 Appendix C: the keys are not the RFC's (Alice's ephemeral key, Bob's key)")
        report.expect(
            vector.sharedSecretZ == RFC7518AppendixC.sharedSecretZ && vector.derivedKey == RFC7518AppendixC.derivedKey
                && vector.algorithmID == "A128GCM" && vector.apu == "QWxpY2U" && vector.apv == "Qm9i"
                && vector.keyBits == 128,
            "RFC 7518 Appendix C: Z, the KDF inputs or the derived key are not the RFC's")
        do {
            let ephemeral = try privateKey(vector.ephemeralKey, in: file)
            let recipient = try privateKey(vector.recipientKey, in: file)
            let z = try recipient.sharedSecretFromKeyAgreement(with: ephemeral.publicKey)
            let zFromSender = try ephemeral.sharedSecretFromKeyAgreement(with: recipient.publicKey)
            report.expect(z.withUnsafeBytes { Array($0) } == vector.sharedSecretZ, "RFC 7518 Appendix C: Z differs")
            report.expect(
                zFromSender.withUnsafeBytes { Array($0) } == vector.sharedSecretZ,
                "RFC 7518 Appendix C: Z computed by the sender differs")
            guard let apu = VectorDecoding.base64url(vector.apu), let apv = VectorDecoding.base64url(vector.apv),
                let expected = VectorDecoding.base64url(vector.derivedKey)
            else {
                report.fail("RFC 7518 Appendix C: apu, apv or derivedKey is not base64url")
                return
            }
            guard vector.keyBits > 0, vector.keyBits % 8 == 0 else {
                report.fail("RFC 7518 Appendix C: keyBits \(vector.keyBits) is not a whole number of bytes")
                return
            }
            let derived = try ConcatKDF.deriveKey(
                sharedSecret: z, algorithmID: vector.algorithmID,
                partyUInfo: Array(apu), partyVInfo: Array(apv),
                keyBytes: vector.keyBits / 8)
            report.expect(
                derived.withUnsafeBytes { Data($0) } == expected,
                "RFC 7518 Appendix C: the derived key differs")
        } catch {
            report.fail("RFC 7518 Appendix C: \(error)")
        }
    }

    static func checkCase(_ vector: Case, in file: File, into report: inout VectorFileReport) {
        let label = "case \(vector.id) \(vector.name)"
        guard let compact = compact(of: vector) else {
            report.fail(
                "\(label): replacePart cannot be applied (index must name a part, fill be one ASCII character, length be 0...\(maximumReplacementLength))"
            )
            return
        }
        let key: P256.KeyAgreement.PrivateKey
        do {
            key = try privateKey(vector.key, in: file)
        } catch {
            report.fail("\(label): key \(vector.key) is unusable: \(error)")
            return
        }
        switch (vector.expected.plaintext, vector.expected.error, outcome(compact, key: key)) {
        case (let plaintext?, nil, .success(let decrypted)):
            report.expect(decrypted == Data(plaintext.utf8), "\(label): the plaintext differs")
            if let pinned = vector.encryptionInputs {
                checkEncryption(vector, plaintext: plaintext, pinned: pinned, key: key, label: label, into: &report)
            }
        case (_?, nil, .failure(let code)):
            report.fail("\(label): failed with \(code) but must decrypt")
        case (nil, let expected?, .success):
            report.fail("\(label): decrypted but must fail with \(expected)")
        case (nil, let expected?, .failure(let code)):
            report.expect(code == expected, "\(label): failed with \(code), expected \(expected)")
        default:
            report.fail("\(label): expected needs exactly one of plaintext and error")
        }
        if vector.encryptionInputs != nil, vector.expected.plaintext == nil || vector.replacePart != nil {
            report.fail("\(label): encryptionInputs belong to a case that decrypts as it is written")
        }
    }

    /// Encrypting the case's plaintext with its pinned ephemeral key, IV and content key, and the
    /// header's algorithms, `kid`, `apu` and `apv`, gives its compact serialization byte for byte.
    static func checkEncryption(
        _ vector: Case, plaintext: String, pinned: EncryptionInputs, key: P256.KeyAgreement.PrivateKey,
        label: String, into report: inout VectorFileReport
    ) {
        guard let d = VectorDecoding.base64url(pinned.ephemeralD), let iv = VectorDecoding.base64url(pinned.iv) else {
            report.fail("\(label): encryptionInputs ephemeralD or iv is not base64url")
            return
        }
        var contentKey: [UInt8]?
        if let cek = pinned.cek {
            guard let bytes = VectorDecoding.base64url(cek) else {
                report.fail("\(label): encryptionInputs cek is not base64url")
                return
            }
            contentKey = Array(bytes)
        }
        do {
            let header = try CompactJWE(parsing: vector.compact).header
            let values = try CompactJWE.PinnedValues(ephemeralScalar: Array(d), contentKey: contentKey, iv: Array(iv))
            let encrypted = try CompactJWE.encrypt(
                Array(plaintext.utf8), to: key.publicKey, algorithm: header.alg, encryption: header.enc,
                keyId: header.kid, partyUInfo: header.apu, partyVInfo: header.apv, pinned: values)
            report.expect(encrypted == vector.compact, "\(label): encrypting with encryptionInputs gives another JWE")
        } catch {
            report.fail("\(label): encrypting with encryptionInputs failed: \(error)")
        }
    }
}

// Fuzz target `jwe`: compact JWE decryption (RFC 7516, ECDH-ES on P-256) with fixed keys, the
// untrusted input of an `application/jose` answer and of `fetchchannel decrypt`; and round trips.
//
// Input: the first byte selects the mode: 255 mode 4, any other value its value modulo 4.
// - 0, 1, 2: the rest is the compact serialization, parsed from its bytes and as text, then
//   decrypted with a fixed key of Vectors/jwe-ecdh-es.json (TEST ONLY): 0 `rfc7520-meriadoc`, the
//   recipient of almost every vector, so that their seeds decrypt; 1 `rfc7518-bob`; 2
//   `rfc7518-alice`.
// - 3: a round trip. Byte 1 picks alg and enc (value modulo 24: alg value / 6, enc value % 6, in
//   the order of `allCases`); byte 2 holds flags: 1, 2, 4 a kid, apu, apv follow (in that order,
//   each a length byte and its bytes), 8 fresh random values (else the ephemeral key, content key
//   and IV are pinned, from a hash of the input), 16 also decrypt with another key. Then a
//   position (two bytes, little-endian) and an XOR mask (one byte, 0: no mutation); the rest is the
//   plaintext, encrypted to Meriadoc's key.
// - 4: the size limit. Byte 1 is d; the rest (or "A"), repeated, makes a text of
//   `CompactJWE.maximumLength` - 8 + d bytes, parsed as in mode 0. (One first byte only: a
//   megabyte costs several runs of the others.)
//
// Checks, besides "no crash":
// - every call returns or throws a `DeviceSigningError` with a reason, nothing else;
// - a refusal before the header follows Vectors/README.md's rules 1-3, as a model here computes
//   them on its own: over 1 MiB `inputTooLarge`, always with the same reason whatever the content
//   (refused before anything is decoded); not five parts `malformedJWE`; part by part, over its
//   limit `inputTooLarge`, not strict base64url `malformedJWE`; an empty header `malformedJWE`.
//   Past those, a parse throws only the header codes (never `inputTooLarge` or `decryptionFailed`);
// - parsing the bytes and parsing the text give the same header or the same error (valid UTF-8);
// - decryption gives the plaintext or `decryptionFailed`, always with the same reason and nothing
//   left in OpenSSL's error queue (no oracle: a bad tag, bad padding and a bad key unwrap alike);
// - a JWE that decrypts has five parts, each strict base64url that re-encodes to itself and is
//   what was parsed (the AAD is the header part); alg and enc from the allow-lists (as the header
//   JSON says, read by JSONSerialization too); encrypted key, IV and tag of the lengths they fix;
//   a plaintext as long as the ciphertext allows;
// - a round trip gives the plaintext and the header asked for, for every alg and enc; the
//   ciphertext with one byte changed never decrypts: a change in the header gives a header error
//   or `decryptionFailed`, in another part `decryptionFailed` (or what the model predicts).

import COpenSSL
import Foundation

@testable import DeviceSigning

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJWE(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzReader(fuzzBytes(data, size))
    let first = reader.byte()
    let mode = first == 255 ? 4 : first % 4
    switch mode {
    case 0, 1, 2:
        decryptCompact(reader.rest(), with: JWEFuzz.keys[Int(mode)])
    case 3:
        roundTrip(&reader, input: fuzzBytes(data, size))
    default:
        let delta = Int(reader.byte())
        var filler = reader.rest()
        if filler.isEmpty { filler = [UInt8(ascii: "A")] }
        let length = CompactJWE.maximumLength - 8 + delta
        while filler.count < length { filler += filler }
        decryptCompact(Array(filler.prefix(length)), with: JWEFuzz.keys[0])
    }
    return 0
}

/// The fixed keys and the reference errors, made in `fuzzWarmUp` (see FuzzSupport.swift).
private enum JWEFuzz {
    /// Vectors/jwe-ecdh-es.json `keys`: rfc7520-meriadoc, rfc7518-bob, rfc7518-alice. TEST ONLY.
    static let keys: [P256.KeyAgreement.PrivateKey] = [
        "r_kHyZ-a06rmxM3yESK84r1otSg-aQcVStkRhA-iCM8",
        "VEmDZpDXXK8p8N0Cndsxs924q6nS1RXFASRl6BfUqdw",
        "0_NxaRPUMQoAJt50Gz8YiTr8gRTwyEaCumd-MToTmIo",
    ].map { d in
        guard let scalar = Base64.decode(d, alphabet: .url),
            let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: scalar)
        else { fatalError("a fixed JWE key does not load") }
        return key
    }

    /// The one error of every decryption failure: a JWE to Meriadoc opened with Bob's key.
    static let decryptionFailure: DeviceSigningError = {
        do {
            let compact = try JWE.encrypt(Array("x".utf8), to: keys[0].publicKey)
            _ = try JWE.decrypt(compact, with: keys[1])
        } catch let error as DeviceSigningError where error.code == .decryptionFailed {
            return error
        } catch {}
        fatalError("a JWE opened with the wrong key did not fail with decryptionFailed")
    }()

    /// The refusal of a JWE over the size limit, from text that is not even base64url.
    static let oversized: DeviceSigningError = {
        do {
            _ = try CompactJWE(parsing: [UInt8](repeating: UInt8(ascii: "!"), count: CompactJWE.maximumLength + 1))
        } catch let error as DeviceSigningError where error.code == .inputTooLarge {
            return error
        } catch {}
        fatalError("an oversized JWE was not refused with inputTooLarge")
    }()

    /// What a header that was read may be refused with (Vectors/README.md, rules 4 and 5).
    static let headerCodes: [DeviceSigningError.Code] = [
        .malformedJWE, .unsupportedAlgorithm, .unsupportedKeyType, .unsupportedCurve, .malformedEncoding, .invalidKey,
    ]

    /// The allow-lists, spelled out: alg with its KEK length (nil: direct), enc with its content
    /// key, IV and tag lengths (RFC 7518 §4.6, §5.1).
    static let algorithms: [String: Int?] = [
        "ECDH-ES": nil, "ECDH-ES+A128KW": 16, "ECDH-ES+A192KW": 24, "ECDH-ES+A256KW": 32,
    ]
    static let encryptions: [String: (key: Int, iv: Int, tag: Int)] = [
        "A128GCM": (16, 12, 16), "A192GCM": (24, 12, 16), "A256GCM": (32, 12, 16),
        "A128CBC-HS256": (32, 16, 16), "A192CBC-HS384": (48, 16, 24), "A256CBC-HS512": (64, 16, 32),
    ]
}

/// Vectors/README.md, "Rules the expected errors follow", 1 to 3, computed here on their own.
private enum FramingModel {
    static let dot = UInt8(ascii: ".")
    /// Header 4 KiB, encrypted key 72 bytes, IV 16, ciphertext 1 MiB, tag 32.
    static let partLimits = [4096, 72, 16, 1 << 20, 32]

    /// The error a parse must throw before it reads the header, or nil when the text passes.
    static func expectedRefusal(_ bytes: [UInt8]) -> DeviceSigningError.Code? {
        if bytes.count > (1 << 20) { return .inputTooLarge }
        let parts = bytes.split(separator: dot, omittingEmptySubsequences: false)
        guard parts.count == 5 else { return .malformedJWE }
        for (part, limit) in zip(parts, partLimits) {
            // The length of the unpadded base64url of `limit` bytes.
            if part.count > (limit * 4 + 2) / 3 { return .inputTooLarge }
            if decode(part) == nil { return .malformedJWE }
        }
        return parts[0].isEmpty ? .malformedJWE : nil
    }

    /// Strict base64url: the URL alphabet, no padding, no length of 1 modulo 4, the unused bits of
    /// the last character zero.
    static func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var bits: UInt32 = 0
        var count: UInt32 = 0
        for character in text {
            let value: UInt8
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = character - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = character - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            bits = bits << 6 | UInt32(value)
            count += 6
            if count >= 8 {
                count -= 8
                out.append(UInt8(truncatingIfNeeded: bits >> count))
            }
            bits &= (1 << count) - 1
        }
        return bits == 0 ? out : nil
    }
}

/// A parse, or the `DeviceSigningError` it threw (anything else fails the run).
private func parse(_ what: String, _ body: () throws -> CompactJWE) -> Result<CompactJWE, DeviceSigningError> {
    do {
        return .success(try body())
    } catch let error as DeviceSigningError {
        fuzzCheck(!error.reason.isEmpty, "\(what): an error without a reason: \(error.code)")
        return .failure(error)
    } catch {
        fatalError("fuzz invariant violated: \(what) threw a non-DeviceSigningError: \(error)")
    }
}

/// Checks a parse of `bytes` against the model.
private func checkParse(_ what: String, _ bytes: [UInt8], _ outcome: Result<CompactJWE, DeviceSigningError>) {
    let expected = FramingModel.expectedRefusal(bytes)
    switch outcome {
    case .success:
        fuzzCheck(expected == nil, "\(what): accepted a JWE the rules refuse with \(expected?.rawValue ?? "")")
    case .failure(let error):
        if let expected {
            fuzzCheck(error.code == expected, "\(what): refused with \(error.code), the rules say \(expected)")
        } else {
            fuzzCheck(JWEFuzz.headerCodes.contains(error.code), "\(what): a framed JWE refused with \(error.code)")
        }
        if bytes.count > CompactJWE.maximumLength {
            fuzzCheck(error.reason == JWEFuzz.oversized.reason, "\(what): an oversized JWE refused otherwise: \(error)")
        }
    }
}

/// Decrypts a parsed JWE: the plaintext, or nil for the one decryption error.
private func decrypt(_ jwe: CompactJWE, with key: P256.KeyAgreement.PrivateKey) -> Data? {
    ERR_clear_error()
    do {
        return try jwe.plaintext(with: key)
    } catch let error as DeviceSigningError {
        checkDecryptionFailure(error)
        return nil
    } catch {
        fatalError("fuzz invariant violated: plaintext(with:) threw a non-DeviceSigningError: \(error)")
    }
}

/// The one error after the header was accepted, worded and attached alike whatever failed.
private func checkDecryptionFailure(_ error: DeviceSigningError) {
    let reference = JWEFuzz.decryptionFailure
    fuzzCheck(error.code == .decryptionFailed, "decryption failed with \(error.code): \(error)")
    fuzzCheck(
        error.reason == reference.reason && error.openSSLErrors == reference.openSSLErrors,
        "decryptionFailed differs from the reference (an oracle): \(error)")
    fuzzCheck(ERR_peek_error() == 0, "a failed decryption left an OpenSSL error queued")
}

/// Mode 0-2 and 4: parse `bytes` both ways, decrypt, check what comes back.
private func decryptCompact(_ bytes: [UInt8], with key: P256.KeyAgreement.PrivateKey) {
    let fromBytes = parse("CompactJWE(parsing: bytes)") { try CompactJWE(parsing: bytes) }
    checkParse("CompactJWE(parsing: bytes)", bytes, fromBytes)
    let text = String(decoding: bytes, as: UTF8.self)
    let fromText = parse("CompactJWE(parsing: String)") { try CompactJWE(parsing: text) }
    let textBytes = Array(text.utf8)
    checkParse("CompactJWE(parsing: String)", textBytes, fromText)
    if same(textBytes, bytes) {
        switch (fromBytes, fromText) {
        case (.success(let a), .success(let b)):
            fuzzCheck(a.header == b.header, "the bytes and the text parse to different headers")
        case (.failure(let a), .failure(let b)):
            fuzzCheck(a.code == b.code && a.reason == b.reason, "the bytes and the text fail differently: \(a) / \(b)")
        default:
            fuzzCheck(false, "the bytes and the text parse differently")
        }
    }
    guard case .success(let jwe) = fromBytes, let plaintext = decrypt(jwe, with: key) else { return }
    checkDecrypted(bytes, jwe, plaintext)
}

/// Whether two byte arrays are equal, with memcmp: Array's == is compiled into this file, at
/// -Onone in a smoke run, and mode 4 compares a megabyte.
private func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return a.withUnsafeBytes { a in
        b.withUnsafeBytes { b in
            guard let x = a.baseAddress, let y = b.baseAddress else { return true }
            return memcmp(x, y, a.count) == 0
        }
    }
}

/// What a JWE that decrypted must be.
private func checkDecrypted(_ bytes: [UInt8], _ jwe: CompactJWE, _ plaintext: Data) {
    let parts = bytes.split(separator: FramingModel.dot, omittingEmptySubsequences: false)
    fuzzCheck(parts.count == 5, "decrypted a JWE of \(parts.count) parts")
    var decoded: [[UInt8]] = []
    for part in parts {
        guard let value = FramingModel.decode(part) else {
            fuzzCheck(false, "decrypted a JWE with a part that is not strict base64url")
            return
        }
        fuzzCheck(
            Base64.encodeToBytes(value, alphabet: .url).elementsEqual(part),
            "base64url is not canonical: two encodings decode to the same bytes")
        decoded.append(value)
    }
    fuzzCheck(jwe.aad.elementsEqual(parts[0]), "the AAD is not the header part")
    fuzzCheck(
        jwe.encryptedKey == decoded[1] && jwe.iv == decoded[2] && jwe.ciphertext == decoded[3] && jwe.tag == decoded[4],
        "the parsed parts differ from the text")

    let alg = jwe.header.alg.rawValue
    let enc = jwe.header.enc.rawValue
    guard let kek = JWEFuzz.algorithms[alg], let lengths = JWEFuzz.encryptions[enc] else {
        fuzzCheck(false, "decrypted with alg \(alg), enc \(enc): not in the allow-lists")
        return
    }
    if let object = try? JSONSerialization.jsonObject(with: Data(decoded[0])) as? [String: Any] {
        fuzzCheck(
            (object["alg"] as? String)?.unicodeScalars.elementsEqual(alg.unicodeScalars) == true
                && (object["enc"] as? String)?.unicodeScalars.elementsEqual(enc.unicodeScalars) == true,
            "alg and enc as parsed differ from the header JSON")
    }
    fuzzCheck(decoded[1].count == (kek == nil ? 0 : lengths.key + 8), "encrypted key of \(decoded[1].count) bytes")
    fuzzCheck(decoded[2].count == lengths.iv, "IV of \(decoded[2].count) bytes with \(enc)")
    fuzzCheck(decoded[4].count == lengths.tag, "tag of \(decoded[4].count) bytes with \(enc)")
    let ciphertext = decoded[3].count
    if lengths.iv == 12 {
        fuzzCheck(plaintext.count == ciphertext, "GCM plaintext of \(plaintext.count) from \(ciphertext) bytes")
    } else {
        fuzzCheck(
            ciphertext % 16 == 0 && plaintext.count < ciphertext && plaintext.count >= ciphertext - 16,
            "CBC plaintext of \(plaintext.count) from \(ciphertext) bytes")
    }
}

/// Mode 3: encrypt, decrypt, then change one byte.
private func roundTrip(_ reader: inout FuzzReader, input: [UInt8]) {
    let pair = Int(reader.byte() % 24)
    let algorithm = JWE.Algorithm.allCases[pair / 6]
    let encryption = JWE.ContentEncryption.allCases[pair % 6]
    let flags = reader.byte()
    let keyId = flags & 1 != 0 ? String(decoding: reader.shortBytes(), as: UTF8.self) : nil
    let apu = flags & 2 != 0 ? reader.shortBytes() : []
    let apv = flags & 4 != 0 ? reader.shortBytes() : []
    let position = Int(reader.byte()) | Int(reader.byte()) << 8
    let mask = reader.byte()
    let plaintext = reader.rest()
    let recipient = JWEFuzz.keys[0]

    let compact: String
    do {
        if flags & 8 != 0 {
            compact = try CompactJWE.encrypt(
                plaintext, to: recipient.publicKey, algorithm: algorithm, encryption: encryption, keyId: keyId,
                partyUInfo: apu, partyVInfo: apv)
        } else {
            var random = FuzzRandom(hashing: input)
            func draw(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) } }
            let scalar = draw(32)
            let contentKey = algorithm.keyWrapBytes == nil ? nil : draw(encryption.keyBytes)
            let iv = draw(encryption.ivBytes)
            // A scalar of zero or of the group order or more (about 2^-32): a fixed one instead.
            let fixed = [UInt8](repeating: 7, count: 32)
            let pinned =
                try (try? CompactJWE.PinnedValues(ephemeralScalar: scalar, contentKey: contentKey, iv: iv))
                ?? CompactJWE.PinnedValues(ephemeralScalar: fixed, contentKey: contentKey, iv: iv)
            compact = try CompactJWE.encrypt(
                plaintext, to: recipient.publicKey, algorithm: algorithm, encryption: encryption, keyId: keyId,
                partyUInfo: apu, partyVInfo: apv, pinned: pinned)
        }
    } catch {
        // At most 8 KiB of plaintext and a header well under 4 KiB: nothing may fail.
        fuzzCheck(false, "encrypting with \(algorithm.rawValue), \(encryption.rawValue) failed: \(error)")
        return
    }

    let bytes = Array(compact.utf8)
    fuzzCheck(FramingModel.expectedRefusal(bytes) == nil, "encrypt wrote a JWE the rules refuse")
    guard case .success(let jwe) = parse("CompactJWE(parsing:) of an encryption", { try CompactJWE(parsing: compact) })
    else {
        fuzzCheck(false, "the JWE just encrypted does not parse")
        return
    }
    let header = jwe.header
    fuzzCheck(header.alg == algorithm && header.enc == encryption, "the header's alg or enc is not what was asked")
    let kidMatches = keyId.map { header.kid?.unicodeScalars.elementsEqual($0.unicodeScalars) ?? false }
    fuzzCheck(kidMatches ?? (header.kid == nil), "the header's kid is not what was asked")
    fuzzCheck(header.apu == apu && header.apv == apv, "the header's apu or apv is not what was asked")
    guard let opened = decrypt(jwe, with: recipient) else {
        fuzzCheck(false, "a JWE just encrypted with \(algorithm.rawValue), \(encryption.rawValue) does not decrypt")
        return
    }
    fuzzCheck(Array(opened) == plaintext, "the round trip changed the plaintext")
    checkDecrypted(bytes, jwe, opened)
    if flags & 16 != 0 {
        fuzzCheck(decrypt(jwe, with: JWEFuzz.keys[1]) == nil, "a JWE to one key decrypted with another")
    }

    // One byte changed: never the plaintext; in the header a header error, elsewhere one error.
    guard mask != 0 else { return }
    var mutated = bytes
    let index = position % mutated.count
    mutated[index] ^= mask
    let outcome = parse("CompactJWE(parsing:) of a changed JWE") { try CompactJWE(parsing: mutated) }
    checkParse("CompactJWE(parsing:) of a changed JWE", mutated, outcome)
    let part = bytes[..<index].reduce(0) { $1 == FramingModel.dot ? $0 + 1 : $0 }
    guard case .success(let changed) = outcome else {
        // Same lengths and the same header: only the header may make a framed JWE fail to parse.
        fuzzCheck(
            part == 0 || FramingModel.expectedRefusal(mutated) != nil,
            "a change in part \(part) that keeps the framing made the parse fail")
        return
    }
    fuzzCheck(part == 0 || changed.header == header, "a change after the header changed the header")
    fuzzCheck(decrypt(changed, with: recipient) == nil, "a JWE with part \(part) changed decrypted")
}

func fuzzWarmUp() {
    _ = JWEFuzz.keys
    _ = JWEFuzz.decryptionFailure
    _ = JWEFuzz.oversized
    _ = JWEFuzz.headerCodes
    _ = JWEFuzz.algorithms
    _ = JWEFuzz.encryptions
    // A round trip with a change in the tag, one with kid, apu and apv; a compact that does not
    // parse; an oversized one.
    fuzzRun(fuzzJWE, [3, 5, 0, 0xFF, 0xFF, 1] + Array("warm up".utf8))
    fuzzRun(fuzzJWE, [3, 23, 1 | 2 | 4 | 16, 1, UInt8(ascii: "k"), 1, 0, 2, 1, 2, 0, 0, 0] + Array("w".utf8))
    fuzzRun(fuzzJWE, [0] + Array("e30....".utf8))
    fuzzRun(fuzzJWE, [255, 9, UInt8(ascii: ".")])
}

import Foundation

/// A JWE with ECDH-ES on P-256 in compact serialization (RFC 7516 §7.1):
/// `header.encryptedKey.iv.ciphertext.tag`.
///
/// Parsing is strict and happens before any key is used: at most 1 MiB, and each part within its
/// own limit before it is decoded; exactly five parts, each strict base64url without padding; the
/// header as `JWEHeader` describes (allow-lists, `epk` on the curve); the encrypted key empty for
/// `ECDH-ES` and exactly the wrapped content key (key length + 8) for the key-wrap algorithms;
/// the IV and tag exactly the lengths `enc` fixes; a CBC ciphertext whole blocks. The plaintext is
/// available only through `plaintext(with:)`, and every failure there is one error,
/// `.decryptionFailed`: no caller can tell a bad tag from bad padding or a failed key unwrap.
public struct CompactJWE: Sendable {
    public static let maximumLength = 1 << 20

    public let header: JWEHeader
    /// The additional authenticated data: the ASCII of the header's base64url (RFC 7516 §5.2).
    let aad: [UInt8]
    let encryptedKey: [UInt8]
    let iv: [UInt8]
    let ciphertext: [UInt8]
    let tag: [UInt8]

    /// The longest encrypted key: a 64-byte content key (A256CBC-HS512) wrapped.
    static let maximumEncryptedKeyBytes = 64 + JWEBackend.keyWrapOverhead

    /// The length of the unpadded base64url of `count` bytes.
    static func encodedLength(of count: Int) -> Int { (count * 4 + 2) / 3 }

    public init(parsing compact: String) throws {
        var compact = compact
        self = try compact.withUTF8 { try CompactJWE(parsing: UnsafeRawBufferPointer($0)) }
    }

    /// The same for the compact form as bytes (an HTTP body): no `String` and no UTF-8 pass over
    /// the whole; a byte that is neither a dot nor base64url is refused by the parse itself.
    public init<Bytes: ContiguousBytes>(parsing compact: Bytes) throws {
        self = try compact.withUnsafeBytes { try CompactJWE(parsing: $0) }
    }

    /// The parse itself, on the bytes of the compact form: each part is decoded straight from
    /// them, with no copy of the whole (most of an answer is its ciphertext).
    private init(parsing bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count <= CompactJWE.maximumLength else {
            throw DeviceSigningError(.inputTooLarge, "The JWE is longer than \(CompactJWE.maximumLength) bytes.")
        }
        guard let parts = Self.parts(of: bytes) else {
            let count = bytes.reduce(1) { $1 == UInt8(ascii: ".") ? $0 + 1 : $0 }
            throw DeviceSigningError(
                .malformedJWE, "A compact JWE has exactly five dot-separated parts; this one has \(count).")
        }
        // Part by part, in order, each within its own limit before it is decoded. Named values
        // rather than arrays of parts, limits and results: those arrays' generic metadata was
        // looked up again on every parse.
        let encodedHeader = parts.0
        let headerJSON = try Self.decode(encodedHeader, "header", limit: JWEHeader.maximumBytes)
        let encryptedKey = try Self.decode(parts.1, "encrypted key", limit: Self.maximumEncryptedKeyBytes)
        let iv = try Self.decode(parts.2, "IV", limit: 16)
        let ciphertext = try Self.decode(parts.3, "ciphertext", limit: CompactJWE.maximumLength)
        let tag = try Self.decode(parts.4, "tag", limit: 32)
        guard !headerJSON.isEmpty else {
            throw DeviceSigningError(.malformedJWE, "The JWE has an empty protected header.")
        }
        let header = try JWEHeader(json: headerJSON)
        try Self.checkLengths(header: header, encryptedKey: encryptedKey, iv: iv, ciphertext: ciphertext, tag: tag)
        self.header = header
        self.aad = Array(encodedHeader)
        self.encryptedKey = encryptedKey
        self.iv = iv
        self.ciphertext = ciphertext
        self.tag = tag
    }

    /// One part decoded: at most `limit` bytes, strict base64url without padding.
    private static func decode(_ part: UnsafeRawBufferPointer, _ name: String, limit: Int) throws -> [UInt8] {
        guard part.count <= Self.encodedLength(of: limit) else {
            throw DeviceSigningError(.inputTooLarge, "The JWE \(name) is longer than \(limit) bytes.")
        }
        guard let value = Base64.decode(part, alphabet: .url) else {
            throw DeviceSigningError(.malformedJWE, "The JWE \(name) is not base64url without padding.")
        }
        return value
    }

    /// The five dot-separated parts of `bytes` (found with memchr), or nil when it has more or
    /// fewer.
    private static func parts(
        of bytes: UnsafeRawBufferPointer
    ) -> (
        UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer,
        UnsafeRawBufferPointer
    )? {
        var rest = bytes
        func next() -> UnsafeRawBufferPointer? {
            guard let base = rest.baseAddress, rest.count > 0,
                let found = memchr(base, Int32(UInt8(ascii: ".")), rest.count)
            else { return nil }
            let length = base.distance(to: UnsafeRawPointer(found))
            defer { rest = UnsafeRawBufferPointer(rebasing: rest[(length + 1)...]) }
            return UnsafeRawBufferPointer(rebasing: rest[..<length])
        }
        guard let header = next(), let encryptedKey = next(), let iv = next(), let ciphertext = next() else {
            return nil
        }
        let tag = rest
        guard next() == nil else { return nil }
        return (header, encryptedKey, iv, ciphertext, tag)
    }

    /// The exact lengths `alg` and `enc` fix. None of them depends on a key, so refusing them
    /// here tells an attacker nothing.
    private static func checkLengths(
        header: JWEHeader, encryptedKey: [UInt8], iv: [UInt8], ciphertext: [UInt8], tag: [UInt8]
    ) throws {
        func malformed(_ reason: String) -> DeviceSigningError { DeviceSigningError(.malformedJWE, "JWE: " + reason) }
        let enc = header.enc
        if header.alg.keyWrapBytes == nil {
            guard encryptedKey.isEmpty else {
                throw malformed("With alg ECDH-ES the encrypted key must be empty; it has \(encryptedKey.count) bytes.")
            }
        } else {
            let expected = enc.keyBytes + JWEBackend.keyWrapOverhead
            guard encryptedKey.count == expected else {
                throw malformed(
                    "With alg \(header.alg.rawValue) and enc \(enc.rawValue) the encrypted key is "
                        + "\(expected) bytes; got \(encryptedKey.count).")
            }
        }
        guard iv.count == enc.ivBytes else {
            throw malformed("With enc \(enc.rawValue) the IV is \(enc.ivBytes) bytes; got \(iv.count).")
        }
        guard tag.count == enc.tagBytes else {
            throw malformed("With enc \(enc.rawValue) the tag is \(enc.tagBytes) bytes; got \(tag.count).")
        }
        guard enc.isPossibleCiphertextLength(ciphertext.count) else {
            throw malformed("With enc \(enc.rawValue) the ciphertext is whole 16-byte blocks; got \(ciphertext.count).")
        }
    }

    /// Agrees on the key with `key` and the header's `epk`, derives or unwraps the content key,
    /// checks the tag and decrypts. Every failure of the JWE is `.decryptionFailed`, with one
    /// reason. A key in a TPM that cannot be used now throws the TPM's own error
    /// (`.tpmUnavailable`, `.tpmKeyForeign`, `.tpmRefused`): the device's key failed, not the
    /// JWE, and the agreement comes before anything of the JWE but its `epk`, which was checked
    /// when it was parsed, so it tells nothing about the rest.
    public func plaintext(with key: P256.KeyAgreement.PrivateKey) throws -> Data {
        let sharedSecret: SecureBytes
        do {
            sharedSecret = try key.sharedSecretFromKeyAgreement(withPeer: header.epkKey)
        } catch let error as DeviceSigningError where error.code.isTPMFailure {
            OpenSSLErrorQueue.clear()
            throw error
        } catch {
            OpenSSLErrorQueue.clear()
            throw Self.decryptionFailed
        }
        do {
            let contentKey = try self.contentKey(sharedSecret: sharedSecret)
            return try header.enc.open(key: contentKey, iv: iv, aad: aad, ciphertext: ciphertext, tag: tag)
        } catch {
            // Which step failed must not show, not even in the OpenSSL error queue.
            OpenSSLErrorQueue.clear()
            throw Self.decryptionFailed
        }
    }

    private static let decryptionFailed = DeviceSigningError(
        .decryptionFailed, "The JWE does not decrypt with this key (or was altered).")

    private func contentKey(sharedSecret: SecureBytes) throws -> SecureBytes {
        let (apu, apv) = (header.apu, header.apv)
        guard let kekBytes = header.alg.keyWrapBytes else {
            return try ConcatKDF.deriveKey(
                sharedSecret: sharedSecret, algorithmID: header.enc.rawValue,
                partyUInfo: apu, partyVInfo: apv, keyBytes: header.enc.keyBytes)
        }
        let kek = try ConcatKDF.deriveKey(
            sharedSecret: sharedSecret, algorithmID: header.alg.rawValue,
            partyUInfo: apu, partyVInfo: apv, keyBytes: kekBytes)
        return try Self.unwrappedOrRandom(encryptedKey, kek: kek, keyBytes: header.enc.keyBytes)
    }

    /// The content key `encryptedKey` wraps under `kek`; when it does not unwrap, a random key of
    /// the same size, with which the content then fails its tag (RFC 7516 §11.5). The random key
    /// is drawn either way, so a wrapped key that was altered takes the same steps, and about the
    /// same time, as an altered tag.
    static func unwrappedOrRandom(_ encryptedKey: [UInt8], kek: SecureBytes, keyBytes: Int) throws -> SecureBytes {
        let substitute = try JWEBackend.randomBytes(count: keyBytes)
        return try JWEBackend.unwrap(encryptedKey, kek: kek) ?? substitute
    }
}

extension CompactJWE {
    /// Encrypts `plaintext` to `recipient` with a fresh ephemeral key pair, IV and (for the
    /// key-wrap algorithms) content key, all from OpenSSL's generator.
    ///
    /// `keyId` becomes the header's `kid`; `partyUInfo` and `partyVInfo` its `apu` and `apv` (at most
    /// `ConcatKDF.maximumPartyInfoBytes` each). Throws `.inputTooLarge` when the result would be
    /// longer than `maximumLength`, which no decrypter here would accept.
    public static func encrypt<Plaintext: DataProtocol>(
        _ plaintext: Plaintext, to recipient: P256.KeyAgreement.PublicKey,
        algorithm: JWE.Algorithm = .ecdhES, encryption: JWE.ContentEncryption = .a256GCM,
        keyId: String? = nil, partyUInfo: [UInt8] = [], partyVInfo: [UInt8] = []
    ) throws -> String {
        let inputs = Inputs(
            recipient: recipient, algorithm: algorithm, encryption: encryption, keyId: keyId,
            partyUInfo: partyUInfo, partyVInfo: partyVInfo)
        if let result = try plaintext.withContiguousStorageIfAvailable({
            try encrypt(UnsafeRawBufferPointer($0), inputs, random: OpenSSLJWERandomSource())
        }) {
            return result
        }
        // A plaintext in pieces (DispatchData, say) is gathered where it is cleared when released.
        return try SecureBytes(plaintext).withUnsafeBytes { try encrypt($0, inputs, random: OpenSSLJWERandomSource()) }
    }

    /// Everything about one encryption but the plaintext and the random values.
    struct Inputs {
        let recipient: P256.KeyAgreement.PublicKey
        let algorithm: JWE.Algorithm
        let encryption: JWE.ContentEncryption
        let keyId: String?
        let partyUInfo: [UInt8]
        let partyVInfo: [UInt8]
    }

    /// The encryption itself, with the random values from `random` (tests pin them).
    static func encrypt(
        _ plaintext: UnsafeRawBufferPointer, _ inputs: Inputs, random: some JWERandomSource
    ) throws -> String {
        let enc = inputs.encryption
        let (apu, apv) = (inputs.partyUInfo, inputs.partyVInfo)
        let ephemeral = try random.ephemeralKey()
        let sharedSecret = try ephemeral.sharedSecretFromKeyAgreement(with: inputs.recipient)
        let contentKey: SecureBytes
        let encryptedKey: [UInt8]
        if let kekBytes = inputs.algorithm.keyWrapBytes {
            let kek = try ConcatKDF.deriveKey(
                sharedSecret: sharedSecret, algorithmID: inputs.algorithm.rawValue,
                partyUInfo: apu, partyVInfo: apv, keyBytes: kekBytes)
            contentKey = try random.bytes(count: enc.keyBytes)
            encryptedKey = try JWEBackend.wrap(contentKey, kek: kek)
        } else {
            contentKey = try ConcatKDF.deriveKey(
                sharedSecret: sharedSecret, algorithmID: enc.rawValue,
                partyUInfo: apu, partyVInfo: apv, keyBytes: enc.keyBytes)
            encryptedKey = []
        }
        let iv = try random.bytes(count: enc.ivBytes).withUnsafeBytes { Array($0) }
        let header = JWEHeader.encode(
            alg: inputs.algorithm, enc: enc, epk: ephemeral.publicKey, kid: inputs.keyId,
            apu: apu, apv: apv)
        guard header.count <= JWEHeader.maximumBytes else {
            throw DeviceSigningError(
                .inputTooLarge,
                "The JWE header would be larger than \(JWEHeader.maximumBytes) bytes.")
        }
        let encodedHeader = Base64.encodeToBytes(header, alphabet: .url)
        let length =
            encodedHeader.count + 4 + encodedLength(of: encryptedKey.count) + encodedLength(of: iv.count)
            + encodedLength(of: enc.ciphertextBytes(plaintextBytes: plaintext.count)) + encodedLength(of: enc.tagBytes)
        guard length <= maximumLength else {
            throw DeviceSigningError(
                .inputTooLarge,
                "The JWE would be longer than \(maximumLength) bytes; the plaintext is too large.")
        }
        let sealed = try enc.seal(key: contentKey, iv: iv, aad: encodedHeader, plaintext: plaintext)
        var output = encodedHeader
        output.reserveCapacity(length)
        for part in [encryptedKey, iv, sealed.ciphertext, sealed.tag] {
            output.append(UInt8(ascii: "."))
            output.append(contentsOf: Base64.encodeToBytes(part, alphabet: .url))
        }
        return String(decoding: output, as: UTF8.self)
    }
}

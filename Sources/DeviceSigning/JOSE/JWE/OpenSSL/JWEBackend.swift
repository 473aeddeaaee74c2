internal import CDeviceSigningShim
internal import COpenSSL
import Foundation

/// Every OpenSSL call the JWE code makes, in one place. Sizes are checked here before they cross
/// into C; secrets come in and go out as `SecureBytes`. Failures are `DeviceSigningError`s whose
/// reasons name the step; `CompactJWE` folds all of them into one error when it decrypts.
///
/// The `SecureBytes(count:)` initialisers here never throw: C reports into a flag and the error is
/// thrown after the (zeroed) buffer exists, so a failure releases it through `deinit` only.
enum JWEBackend {
    static let sharedSecretBytes = Int(DSS_ECDH_P256_SECRET_BYTES)
    static let keyWrapOverhead = Int(DSS_AES_KEY_WRAP_OVERHEAD)
    static let blockBytes = Int(DSS_AES_BLOCK_BYTES)

    private static func base(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
        buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }

    private static func base(_ buffer: UnsafeMutableRawBufferPointer) -> UnsafeMutablePointer<UInt8>? {
        buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }

    /// ECDH: Z, the x coordinate of the shared point (both keys were validated when built).
    static func sharedSecret(privateKey: EVPKey, publicKey: EVPKey) throws -> SecureBytes {
        try sharedSecret(privateKey) { out in
            withExtendedLifetime(publicKey) { privateKey.deriveP256(withPeer: publicKey.pointer, into: out) }
        }
    }

    /// ECDH with a JWE's `epk`, checked when it was decoded.
    static func sharedSecret(privateKey: EVPKey, peer: PeerPublicKey) throws -> SecureBytes {
        try sharedSecret(privateKey) { out in
            withExtendedLifetime(peer) { privateKey.deriveP256(withPeer: peer.pointer, into: out) }
        }
    }

    private static func sharedSecret(
        _ privateKey: EVPKey, _ derive: (UnsafeMutableRawBufferPointer) -> Bool
    ) throws -> SecureBytes {
        guard privateKey.isPrivate else {
            throw DeviceSigningError(.invalidKey, "The key agreement needs a private key.")
        }
        var ok = false
        let secret = SecureBytes(count: sharedSecretBytes) { ok = derive($0) }
        guard ok else { throw OpenSSLErrorQueue.error(.openSSLFailure, "The ECDH key agreement failed.") }
        return secret
    }

    /// The Concat KDF with SHA-256 (the hashes of SP 800-56A §5.8.1): `count` bytes from Z and OtherInfo.
    static func concatKDF(sharedSecret: SecureBytes, otherInfo: UnsafeRawBufferPointer, count: Int) throws
        -> SecureBytes
    {
        guard count > 0, count <= 64, sharedSecret.count > 0 else {
            throw DeviceSigningError(.invalidKey, "The Concat KDF derives 1 to 64 bytes from a non-empty secret.")
        }
        var ok = false
        let key = SecureBytes(count: count) { out in
            ok = sharedSecret.withUnsafeBytes { z in
                dss_concat_kdf_sha256(base(z), z.count, base(otherInfo), otherInfo.count, base(out), out.count) == 1
            }
        }
        guard ok else { throw OpenSSLErrorQueue.error(.openSSLFailure, "The Concat KDF failed.") }
        return key
    }

    /// AES Key Wrap (RFC 3394) of `key` under `kek` (16, 24 or 32 bytes).
    static func wrap(_ key: SecureBytes, kek: SecureBytes) throws -> [UInt8] {
        guard [16, 24, 32].contains(kek.count), key.count >= 16, key.count % 8 == 0 else {
            throw DeviceSigningError(.invalidKey, "AES Key Wrap takes a 16-, 24- or 32-byte KEK and a key of 8n bytes.")
        }
        var wrapped = [UInt8](repeating: 0, count: key.count + keyWrapOverhead)
        let ok = key.withUnsafeBytes { input in
            wrapped.withUnsafeMutableBytes { keyWrap(dss_aes_key_wrap, kek: kek, input, into: $0) }
        }
        guard ok else { throw OpenSSLErrorQueue.error(.openSSLFailure, "AES Key Wrap failed.") }
        return wrapped
    }

    /// AES Key Unwrap; nil when the RFC 3394 integrity check fails (wrong KEK or altered bytes).
    /// That failure is not worded (the error queue is only cleared), so that it costs what a
    /// failed tag costs (``CompactJWE/unwrappedOrRandom(_:kek:keyBytes:)``). Throws only for sizes
    /// that the JWE's length checks have already refused.
    static func unwrap(_ wrapped: [UInt8], kek: SecureBytes) throws -> SecureBytes? {
        guard [16, 24, 32].contains(kek.count), wrapped.count >= 24, wrapped.count % 8 == 0 else {
            throw DeviceSigningError(.invalidKey, "AES Key Unwrap takes a 16-, 24- or 32-byte KEK and 8n >= 24 bytes.")
        }
        var ok = false
        let key = SecureBytes(count: wrapped.count - keyWrapOverhead) { out in
            ok = wrapped.withUnsafeBytes { keyWrap(dss_aes_key_unwrap, kek: kek, $0, into: out) }
        }
        guard ok else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return key
    }

    /// One pass of the shim's wrap or unwrap (same signature) from `input` into `out`.
    private static func keyWrap(
        _ pass: (UnsafePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?, Int) -> Int32,
        kek: SecureBytes, _ input: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer
    ) -> Bool {
        kek.withUnsafeBytes { kek in
            pass(base(kek), kek.count, base(input), input.count, base(out), out.count) == 1
        }
    }

    /// Ciphertext and tag of an authenticated encryption.
    struct Sealed {
        let ciphertext: [UInt8]
        let tag: [UInt8]
    }

    /// The key, IV, AAD and (when opening) tag of one content encryption, lent to C.
    private struct Lent {
        let key: UnsafeRawBufferPointer
        let iv: UnsafeRawBufferPointer
        let aad: UnsafeRawBufferPointer
        let tag: UnsafeRawBufferPointer
    }

    private static func lend<R>(
        _ key: SecureBytes, _ iv: [UInt8], _ aad: [UInt8], tag: [UInt8] = [], _ body: (Lent) -> R
    ) -> R {
        key.withUnsafeBytes { key in
            iv.withUnsafeBytes { iv in
                aad.withUnsafeBytes { aad in
                    tag.withUnsafeBytes { tag in body(Lent(key: key, iv: iv, aad: aad, tag: tag)) }
                }
            }
        }
    }

    /// A sealing call of the shim with its outputs allocated: `call` gets the lent inputs, the
    /// ciphertext and the tag buffer, and says whether it succeeded.
    private static func seal(
        _ key: SecureBytes, _ iv: [UInt8], _ aad: [UInt8], ciphertextBytes: Int, tagBytes: Int,
        _ call: (Lent, UnsafeMutableRawBufferPointer, UnsafeMutableRawBufferPointer) -> Bool
    ) -> Sealed? {
        var ciphertext = [UInt8](repeating: 0, count: ciphertextBytes)
        var tag = [UInt8](repeating: 0, count: tagBytes)
        let ok = lend(key, iv, aad) { lent in
            ciphertext.withUnsafeMutableBytes { out in tag.withUnsafeMutableBytes { call(lent, out, $0) } }
        }
        return ok ? Sealed(ciphertext: ciphertext, tag: tag) : nil
    }

    /// An opening call of the shim with the plaintext allocated (as long as the ciphertext):
    /// `call` gets the lent inputs, the ciphertext and the plaintext buffer, and returns how many
    /// plaintext bytes it wrote, or nil when it failed (the shim has cleansed the buffer then).
    ///
    /// The buffer is not zero-filled first: the shim writes every byte it reports, and the `Data`
    /// takes the buffer over without a copy (filling an answer's worth of bytes that are
    /// overwritten at once cost as much as the AES-GCM key setup).
    private static func open(
        _ key: SecureBytes, _ iv: [UInt8], _ aad: [UInt8], tag: [UInt8], ciphertext: [UInt8],
        _ call: (Lent, UnsafeRawBufferPointer, UnsafeMutableRawBufferPointer) -> Int?
    ) -> Data? {
        let capacity = ciphertext.count
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(capacity, 1), alignment: 16)
        let plaintext = UnsafeMutableRawBufferPointer(start: buffer, count: capacity)
        let written = lend(key, iv, aad, tag: tag) { lent in
            ciphertext.withUnsafeBytes { input in call(lent, input, plaintext) }
        }
        guard let written, written >= 0, written <= capacity else {
            secureZero(plaintext)
            buffer.deallocate()
            return nil
        }
        // The plaintext (the operations and their redeem tokens) is zeroed when the Data goes.
        return zeroingData(adopting: buffer, capacity: capacity, count: written)
    }

    /// AES-GCM with a 12-byte IV and a 16-byte tag.
    static func gcmSeal(
        key: SecureBytes, iv: [UInt8], aad: [UInt8], plaintext: UnsafeRawBufferPointer
    ) throws -> Sealed {
        let sealed = seal(key, iv, aad, ciphertextBytes: plaintext.count, tagBytes: Int(DSS_GCM_TAG_BYTES)) {
            lent, out, tagOut in
            dss_aes_gcm_seal(
                base(lent.key), lent.key.count, base(lent.iv), lent.iv.count, base(lent.aad), lent.aad.count,
                base(plaintext), plaintext.count, base(out), base(tagOut), tagOut.count) == 1
        }
        guard let sealed else { throw OpenSSLErrorQueue.error(.openSSLFailure, "AES-GCM encryption failed.") }
        return sealed
    }

    /// AES-GCM decryption; fails unless the tag verifies.
    static func gcmOpen(key: SecureBytes, iv: [UInt8], aad: [UInt8], ciphertext: [UInt8], tag: [UInt8]) throws -> Data {
        let opened = open(key, iv, aad, tag: tag, ciphertext: ciphertext) { lent, input, out in
            let ok = dss_aes_gcm_open(
                base(lent.key), lent.key.count, base(lent.iv), lent.iv.count, base(lent.aad), lent.aad.count,
                base(input), input.count, base(lent.tag), lent.tag.count, base(out))
            return ok == 1 ? input.count : nil
        }
        guard let opened else { throw OpenSSLErrorQueue.error(.openSSLFailure, "AES-GCM decryption failed.") }
        return opened
    }

    /// AES-CBC + HMAC-SHA-2 (RFC 7518 §5.2.2): key = MAC key || encryption key.
    static func cbcHMACSeal(
        key: SecureBytes, iv: [UInt8], aad: [UInt8], plaintext: UnsafeRawBufferPointer
    ) throws -> Sealed {
        let padded = (plaintext.count / blockBytes + 1) * blockBytes
        let sealed = seal(key, iv, aad, ciphertextBytes: padded, tagBytes: key.count / 2) { lent, out, tagOut in
            var written = 0
            let ok = dss_aes_cbc_hmac_seal(
                base(lent.key), lent.key.count, base(lent.iv), lent.iv.count, base(lent.aad), lent.aad.count,
                base(plaintext), plaintext.count, base(out), out.count, &written, base(tagOut), tagOut.count)
            return ok == 1 && written == padded
        }
        guard let sealed else { throw OpenSSLErrorQueue.error(.openSSLFailure, "AES-CBC-HMAC encryption failed.") }
        return sealed
    }

    /// AES-CBC + HMAC-SHA-2 decryption: the tag is checked in constant time before anything is
    /// decrypted, and a bad tag and bad padding fail alike.
    static func cbcHMACOpen(
        key: SecureBytes, iv: [UInt8], aad: [UInt8], ciphertext: [UInt8], tag: [UInt8]
    ) throws -> Data {
        let opened = open(key, iv, aad, tag: tag, ciphertext: ciphertext) { lent, input, out in
            var written = 0
            let ok = dss_aes_cbc_hmac_open(
                base(lent.key), lent.key.count, base(lent.iv), lent.iv.count, base(lent.aad), lent.aad.count,
                base(input), input.count, base(lent.tag), lent.tag.count, base(out), out.count, &written)
            return ok == 1 ? written : nil
        }
        guard let opened else { throw OpenSSLErrorQueue.error(.openSSLFailure, "AES-CBC-HMAC decryption failed.") }
        return opened
    }

    /// `count` bytes from OpenSSL's DRBG, into zeroed storage (content keys) or plain (IVs).
    static func randomBytes(count: Int) throws -> SecureBytes {
        guard count >= 0, count <= Int(Int32.max) else {
            throw DeviceSigningError(.inputTooLarge, "At most \(Int32.max) random bytes at once.")
        }
        var ok = false
        let bytes = SecureBytes(count: count) { out in
            ok = RAND_bytes(base(out), Int32(count)) == 1
        }
        guard ok else { throw OpenSSLErrorQueue.error(.openSSLFailure, "OpenSSL's random generator failed.") }
        return bytes
    }
}

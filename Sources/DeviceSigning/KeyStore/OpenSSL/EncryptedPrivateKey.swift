internal import CDeviceSigningShim
internal import COpenSSL

/// Encrypted PKCS#8 (`EncryptedPrivateKeyInfo`, PBES2 with scrypt or PBKDF2-HMAC-SHA-256,
/// AES-256-CBC) for P-256 keys, over the shim's `dss_pkcs8_*`.
///
/// The plaintext PrivateKeyInfo never reaches Swift: the shim writes it and reads it back itself
/// (`private_der.c`), and OpenSSL encrypts from and decrypts into buffers it cleanses; the
/// decrypted key is an owned `EVP_PKEY`.
enum EncryptedPrivateKey {
    /// The shim refuses longer passphrases; checking here gives a precise error.
    static let maximumPassphraseBytes = 1024
    /// The shim's limit on EncryptedPrivateKeyInfo DER; a P-256 key takes about 250 bytes.
    static let maximumDERBytes = 16 * 1024

    /// DER EncryptedPrivateKeyInfo of `key` under `passphrase`. The output is not secret.
    static func encrypt(_ key: P256.Signing.PrivateKey, passphrase: SecureBytes, kdf: KeyDerivation) throws -> [UInt8] {
        let backing = try key.softwareBacking()
        try kdf.validate()
        try check(passphrase)
        let (kdfID, cost, r, p): (Int32, Int, Int, Int) =
            switch kdf {
            case let .scrypt(n, r, p): (DSS_KDF_SCRYPT, n, r, p)
            case let .pbkdf2SHA256(iterations): (DSS_KDF_PBKDF2_SHA256, iterations, 0, 0)
            }
        // The shim and OpenSSL take the cost as an int; `validate()` keeps it far lower, and this
        // keeps any path that skips it from crossing into C with a value that would wrap.
        let intRange = 0...Int(Int32.max)
        guard cost >= 1, intRange.contains(cost), intRange.contains(r), intRange.contains(p) else {
            throw DeviceSigningError(
                .invalidKeyDerivation,
                "The key-derivation cost \(kdf) does not fit OpenSSL's int parameters.")
        }
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = passphrase.withUnsafeBytes { pass in
            dss_pkcs8_encrypt_der(
                backing.pointer, pass.baseAddress?.assumingMemoryBound(to: UInt8.self), pass.count,
                kdfID, UInt64(cost), UInt64(r), UInt64(p), &output, &length)
        }
        guard status == 1, let output else {
            throw OpenSSLErrorQueue.error(
                .openSSLFailure, "Could not encrypt the private key (PKCS#8, PBES2 \(kdf), AES-256-CBC).")
        }
        defer { dss_free(output) }  // ours: an OpenSSL allocation holding ciphertext only
        return Array(UnsafeBufferPointer(start: output, count: length))
    }

    /// Decrypts DER EncryptedPrivateKeyInfo. Distinct failures:
    /// - `.malformedEncoding`: not an EncryptedPrivateKeyInfo (truncated, garbage, trailing bytes),
    ///   a scheme OpenSSL 3 cannot run, or a decrypted content that is no private key;
    /// - `.inputTooLarge`: a KDF above the cost limits of `KeyDerivation` (checked here, and in the
    ///   shim for iteration counts above INT_MAX, which OpenSSL would wrap), or oversized input;
    /// - `.wrongPassphrase`: the passphrase does not decrypt it. PBES2 has no integrity check, so
    ///   a damaged ciphertext under a well-formed header looks the same;
    /// - `.unsupportedCurve` / `.unsupportedKeyType`: an EC key on another curve / not an EC key;
    /// - `.invalidKey`: a P-256 key that fails the range or pairwise check.
    static func decrypt(der: UnsafeRawBufferPointer, passphrase: SecureBytes) throws -> P256.Signing.PrivateKey {
        guard der.count <= maximumDERBytes else {
            throw DeviceSigningError(
                .inputTooLarge, "An encrypted private key is at most \(maximumDERBytes) bytes of DER.")
        }
        try check(passphrase)
        _ = try PBES2Parameters(der: der)
        var status: Int32 = DSS_DECRYPT_MALFORMED
        var keyStatus: Int32 = DSS_KEY_MALFORMED
        let decrypted = passphrase.withUnsafeBytes { pass in
            dss_pkcs8_decrypt_der(
                der.baseAddress?.assumingMemoryBound(to: UInt8.self), der.count,
                pass.baseAddress?.assumingMemoryBound(to: UInt8.self), pass.count, &status, &keyStatus)
        }
        guard let decrypted else {
            OpenSSLErrorQueue.clear()  // expected failures; the queue says nothing the code does not
            switch status {
            case DSS_DECRYPT_FAILED:
                throw DeviceSigningError(
                    .wrongPassphrase,
                    "The passphrase does not decrypt this key. (PKCS#8 encryption has no integrity check: a damaged file can look the same.)"
                )
            case DSS_DECRYPT_NOT_A_KEY:
                throw P256Backend.refusal(ofPrivateKey: keyStatus)
                    ?? DeviceSigningError(
                        .malformedEncoding, "The key decrypted, but the content is not a P-256 PKCS#8 private key.")
            case DSS_DECRYPT_UNUSABLE_PARAMETERS:
                // Before any decryption: the passphrase was never tried.
                throw DeviceSigningError(
                    .malformedEncoding,
                    "OpenSSL cannot set up the decryption from this key's encryption algorithm and parameters.")
            case DSS_DECRYPT_COST_OUT_OF_RANGE:
                throw DeviceSigningError(
                    .inputTooLarge,
                    "The key's PBKDF2 iteration count is outside "
                        + "1...\(Int32.max), which OpenSSL cannot run as written.")
            default:
                throw DeviceSigningError(
                    .malformedEncoding, "Not a DER PKCS#8 EncryptedPrivateKeyInfo (or trailing bytes).")
            }
        }
        // Built from its scalar by the shim, as every other import: range and pairwise checked.
        return try P256.Signing.PrivateKey(backing: try EVPKey(takingOwnershipOf: decrypted))
    }

    private static func check(_ passphrase: SecureBytes) throws {
        guard passphrase.count > 0 else {
            throw DeviceSigningError(.passphraseRequired, "An empty passphrase is not accepted.")
        }
        guard passphrase.count <= maximumPassphraseBytes else {
            throw DeviceSigningError(.inputTooLarge, "A passphrase is at most \(maximumPassphraseBytes) bytes.")
        }
    }
}

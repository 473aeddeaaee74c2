internal import CBenchmarkShim
internal import COpenSSL
import DeviceSigning

/// The C baselines the benchmark compares this package against: a program written directly
/// against OpenSSL, with a kept EVP_PKEY_CTX and a precomputed SHA-256 digest, no conversions.
///
/// The key is re-created here from its PKCS#8 and SubjectPublicKeyInfo DER through OpenSSL, so
/// that DeviceSigning exposes nothing for the benchmark (docs/ARCHITECTURE.md, "Where C is, and why").
final class OpenSSLBaseline {
    /// `EVP_PKEY *` of the private and the public key, owned: freed once in `deinit`.
    private let privateKey: OpaquePointer
    private let publicKey: OpaquePointer
    /// `EVP_PKEY_CTX *` initialised for signing and for verifying, made once and kept (as the
    /// C program this stands for would keep them), owned: freed once in `deinit`.
    private let signContext: OpaquePointer
    private let verifyContext: OpaquePointer
    private let digest = [UInt8](repeating: 0x5A, count: 32)
    /// One valid DER signature of `digest`, made once: what every verification checks.
    private let signature: [UInt8]

    init(key: P256.Signing.PrivateKey) throws {
        let pkcs8 = try key.derRepresentation  // SecureBytes: zeroed when released
        let parsedPrivate: OpaquePointer? = pkcs8.withUnsafeBytes { bytes in
            var cursor = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return d2i_AutoPrivateKey(nil, &cursor, bytes.count)
        }
        guard let parsedPrivate else {
            ERR_clear_error()
            throw BenchmarkError("OpenSSL did not read the benchmark key's PKCS#8 DER")
        }
        let spki = [UInt8](key.publicKey.derRepresentation)
        let parsedPublic: OpaquePointer? = spki.withUnsafeBufferPointer { bytes in
            var cursor = bytes.baseAddress
            return d2i_PUBKEY(nil, &cursor, bytes.count)
        }
        guard let parsedPublic else {
            EVP_PKEY_free(parsedPrivate)
            ERR_clear_error()
            throw BenchmarkError("OpenSSL did not read the benchmark key's public DER")
        }
        guard let signing = Self.context(parsedPrivate, EVP_PKEY_sign_init) else {
            EVP_PKEY_free(parsedPrivate)
            EVP_PKEY_free(parsedPublic)
            throw BenchmarkError("OpenSSL did not set up the baseline's signing context")
        }
        guard let verifying = Self.context(parsedPublic, EVP_PKEY_verify_init) else {
            EVP_PKEY_CTX_free(signing)
            EVP_PKEY_free(parsedPrivate)
            EVP_PKEY_free(parsedPublic)
            throw BenchmarkError("OpenSSL did not set up the baseline's verifying context")
        }
        var der = [UInt8](repeating: 0, count: 72)
        var length = der.count
        guard EVP_PKEY_sign(signing, &der, &length, digest, digest.count) == 1, length <= der.count else {
            ERR_clear_error()
            EVP_PKEY_CTX_free(signing)
            EVP_PKEY_CTX_free(verifying)
            EVP_PKEY_free(parsedPrivate)
            EVP_PKEY_free(parsedPublic)
            throw BenchmarkError("OpenSSL did not sign the baseline's digest")
        }
        privateKey = parsedPrivate
        publicKey = parsedPublic
        signContext = signing
        verifyContext = verifying
        signature = Array(der.prefix(length))
    }

    deinit {
        EVP_PKEY_CTX_free(signContext)
        EVP_PKEY_CTX_free(verifyContext)
        EVP_PKEY_free(privateKey)
        EVP_PKEY_free(publicKey)
    }

    /// Runs `iterations` EVP_PKEY_sign calls with the kept context; returns how many succeeded.
    func sign(iterations: Int) -> Int {
        Int(cbs_bench_sign(signContext, digest, iterations))
    }

    /// Runs `iterations` EVP_PKEY_verify calls of the one kept DER signature; returns how many verified.
    func verify(iterations: Int) -> Int {
        Int(cbs_bench_verify(verifyContext, digest, signature, signature.count, iterations))
    }

    /// A context of `key` initialised by `initialise` (sign or verify), or nil; the caller frees it.
    private static func context(
        _ key: OpaquePointer,
        _ initialise: (OpaquePointer?) -> Int32
    ) -> OpaquePointer? {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            ERR_clear_error()
            return nil
        }
        guard initialise(context) == 1 else {
            EVP_PKEY_CTX_free(context)
            ERR_clear_error()
            return nil
        }
        return context
    }
}

internal import CDeviceSigningShim
internal import COpenSSL

/// The C baselines the benchmark compares this package against: a program written directly
/// against OpenSSL, with a kept EVP_PKEY_CTX and a precomputed SHA-256 digest, no conversions.
/// Exposed as SPI so only the benchmark sees it.
@_spi(Benchmarks)
public enum OpenSSLBaseline {
    /// Runs `iterations` EVP_PKEY_sign calls with `key`; returns how many succeeded.
    public static func sign(with key: P256.Signing.PrivateKey, iterations: Int) -> Int {
        guard let context = dss_sign_context(key.backing.pointer, nil) else { return 0 }
        defer { EVP_PKEY_CTX_free(context) }
        let digest = [UInt8](repeating: 0x5A, count: 32)
        return Int(dss_bench_sign(context, digest, iterations))
    }

    /// Runs `iterations` EVP_PKEY_verify calls of one valid DER signature; returns how many verified.
    public static func verify(with key: P256.Signing.PrivateKey, iterations: Int) -> Int {
        guard let signContext = dss_sign_context(key.backing.pointer, nil) else { return 0 }
        defer { EVP_PKEY_CTX_free(signContext) }
        guard let verifyContext = dss_verify_context(key.publicKey.backing.pointer, nil) else { return 0 }
        defer { EVP_PKEY_CTX_free(verifyContext) }
        let digest = [UInt8](repeating: 0x5A, count: 32)
        var der = [UInt8](repeating: 0, count: 72)
        var length = der.count
        guard EVP_PKEY_sign(signContext, &der, &length, digest, digest.count) == 1 else {
            OpenSSLErrorQueue.clear()
            return 0
        }
        return Int(dss_bench_verify(verifyContext, digest, der, length, iterations))
    }
}

/// The fresh values one encryption takes: the ephemeral key pair, the content key (key wrapping
/// only) and the IV. OpenSSL's generator in production; tests pin them to reproduce known answers.
protocol JWERandomSource {
    func ephemeralKey() throws -> P256.KeyAgreement.PrivateKey
    /// `count` random bytes, in zeroed storage because a content key is secret.
    func bytes(count: Int) throws -> SecureBytes
}

/// OpenSSL's DRBG (RAND_bytes) and key generation.
struct OpenSSLJWERandomSource: JWERandomSource {
    func ephemeralKey() throws -> P256.KeyAgreement.PrivateKey { try P256.KeyAgreement.PrivateKey() }
    func bytes(count: Int) throws -> SecureBytes { try JWEBackend.randomBytes(count: count) }
}

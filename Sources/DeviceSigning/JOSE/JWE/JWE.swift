import Foundation

/// JSON Web Encryption (RFC 7516) in compact serialization, with ECDH-ES key agreement on P-256
/// (RFC 7518 §4.6): how the backend's answers for `Accept: application/jose` are encrypted to a
/// device's encryption key (docs/ARCHITECTURE.md, "Encrypted answers").
///
/// `encrypt` and `decrypt` are the short forms of `CompactJWE.encrypt` and
/// `CompactJWE(parsing:)` + `plaintext(with:)`; see `CompactJWE` for the rules.
public enum JWE: Sendable {
    /// Encrypts `plaintext` to `recipient` with a fresh ephemeral key, content key and IV.
    /// The default algorithms are those of the backend: `ECDH-ES` and `A256GCM`.
    public static func encrypt<Plaintext: DataProtocol>(
        _ plaintext: Plaintext, to recipient: P256.KeyAgreement.PublicKey,
        algorithm: Algorithm = .ecdhES, encryption: ContentEncryption = .a256GCM, keyId: String? = nil
    ) throws -> String {
        try CompactJWE.encrypt(plaintext, to: recipient, algorithm: algorithm, encryption: encryption, keyId: keyId)
    }

    /// Parses `compact` strictly and decrypts it with `key`; the plaintext.
    ///
    /// Throws `.inputTooLarge`, `.malformedJWE`, `.unsupportedAlgorithm` or an `epk` key error
    /// (`.invalidKey`, `.malformedEncoding` for a coordinate that is not 32 bytes of base64url,
    /// `.unsupportedCurve`, `.unsupportedKeyType`) for a JWE that is refused before any key
    /// agreement, and `.decryptionFailed` for every failure after that.
    public static func decrypt(_ compact: String, with key: P256.KeyAgreement.PrivateKey) throws -> Data {
        try CompactJWE(parsing: compact).plaintext(with: key)
    }

    /// The same for the compact form as bytes, e.g. an `application/jose` body as received.
    public static func decrypt<Bytes: ContiguousBytes>(
        compact: Bytes, with key: P256.KeyAgreement.PrivateKey
    ) throws -> Data {
        try CompactJWE(parsing: compact).plaintext(with: key)
    }
}

/// The NIST P-256 curve (secp256r1, prime256v1), shaped like swift-crypto's `P256`.
public enum P256 {
    /// ECDSA over P-256 with SHA-256 (ES256).
    public enum Signing {}
}

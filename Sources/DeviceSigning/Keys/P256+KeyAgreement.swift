extension P256 {
    /// Elliptic-curve Diffie-Hellman over P-256, the key agreement of JWE's ECDH-ES.
    ///
    /// Its keys are types of their own, not `P256.Signing` keys: a device's encryption key is never
    /// its signing key (docs/ARCHITECTURE.md, "Encrypted answers"), and the types keep them apart.
    public enum KeyAgreement: Sendable {}
}

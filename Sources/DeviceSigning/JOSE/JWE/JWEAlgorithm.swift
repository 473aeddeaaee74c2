extension JWE {
    /// The key management algorithms (`alg`) this package accepts: ECDH-ES on P-256, the
    /// derived key used directly or as the KEK of AES Key Wrap (RFC 7518 §4.6). Every other
    /// value (`none`, `dir`, RSA, `A128KW`, ...) is refused.
    public enum Algorithm: String, Sendable, Hashable, CaseIterable {
        case ecdhES = "ECDH-ES"
        case ecdhESA128KW = "ECDH-ES+A128KW"
        case ecdhESA192KW = "ECDH-ES+A192KW"
        case ecdhESA256KW = "ECDH-ES+A256KW"

        /// The KEK length of the key wrap, or nil for direct key agreement (the KDF output is the
        /// content key and the JWE's encrypted key is empty).
        public var keyWrapBytes: Int? {
            switch self {
            case .ecdhES: nil
            case .ecdhESA128KW: 16
            case .ecdhESA192KW: 24
            case .ecdhESA256KW: 32
            }
        }
    }
}

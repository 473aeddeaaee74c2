extension DeviceSigningError.Code {
    /// A JWE that is not a well-formed compact serialization of the algorithms this package
    /// supports: parts, encodings, header members, or the lengths of the IV, tag or encrypted key.
    public static let malformedJWE = DeviceSigningError.Code("malformedJWE")
    /// A well-formed JWE that does not decrypt with the given key. One code for every failure after
    /// the header was accepted (key agreement, key unwrap, tag, padding), so that a caller, and an
    /// attacker watching it, cannot tell them apart.
    public static let decryptionFailed = DeviceSigningError.Code("decryptionFailed")
}

extension DeviceSigningError.Code {
    /// A key store entry with this key id already exists (update or delete it instead).
    public static let keyAlreadyExists = DeviceSigningError.Code("keyAlreadyExists")
    /// Key-derivation parameters outside the documented limits (see `KeyDerivation`).
    public static let invalidKeyDerivation = DeviceSigningError.Code("invalidKeyDerivation")
    /// Another operation holds the key's claim (``KeyStore/claim(_:)``): a register or rotate of
    /// that key is under way, in this process or another.
    public static let keyInUse = DeviceSigningError.Code("keyInUse")
}

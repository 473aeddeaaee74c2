extension DeviceSigningError.Code {
    /// A key store entry with this key id already exists (update or delete it instead).
    public static let keyAlreadyExists = DeviceSigningError.Code("keyAlreadyExists")
    /// Key-derivation parameters outside the documented limits (see `KeyDerivation`).
    public static let invalidKeyDerivation = DeviceSigningError.Code("invalidKeyDerivation")
}

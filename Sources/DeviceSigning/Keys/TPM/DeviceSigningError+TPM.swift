extension DeviceSigningError.Code {
    /// The TPM that holds (or is to hold) a hardware-bound key cannot be used: OpenSSL's tpm2
    /// provider is not installed, no TPM answers through the configured TCTI (the reason names
    /// it), the TPM did not answer within the configured timeout, or the connection failed
    /// earlier. The fetch client reports it as `deviceProtectionError`.
    public static let tpmUnavailable = DeviceSigningError.Code("tpmUnavailable")
    /// A TPM key file that the reachable TPM cannot load because another TPM made it (or this
    /// TPM was cleared since), or because the persistent key it was made under is not in that
    /// TPM: the key cannot be used on this device.
    public static let tpmKeyForeign = DeviceSigningError.Code("tpmKeyForeign")
    /// The TPM answered, but refused the operation (the reason gives its response code in words,
    /// for example that it has no room for another loaded key).
    public static let tpmRefused = DeviceSigningError.Code("tpmRefused")
    /// Whether this is one of the codes of a TPM that cannot be used or refused an operation
    /// (`tpmUnavailable`, `tpmKeyForeign`, `tpmRefused`).
    public var isTPMFailure: Bool { self == .tpmUnavailable || self == .tpmKeyForeign || self == .tpmRefused }

    /// An export of private key material from a key whose private half never leaves its TPM.
    public static let keyNotExportable = DeviceSigningError.Code("keyNotExportable")
}

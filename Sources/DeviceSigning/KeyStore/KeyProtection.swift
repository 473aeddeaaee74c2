/// Where a stored key's private half lives, as recorded in its `KeyMetadata` (`"protection"`).
/// A record without it (written before hardware-bound keys existed) is a software key.
public struct KeyProtection: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The private key is in the key file (PKCS#8, encrypted unless the caller chose otherwise).
    public static let software = KeyProtection(rawValue: "software")
    /// The private key is in a TPM 2.0: the key file is a `TSS2 PRIVATE KEY` that only that TPM
    /// can load, and the private key can never be exported.
    public static let tpm2 = KeyProtection(rawValue: "tpm2")

    /// Whether the private key is held by hardware (and so is never exportable).
    public var isHardwareBound: Bool { self == .tpm2 }

    /// In words, for people: `TPM 2.0 (not exportable)` for a TPM key.
    public var description: String { self == .tpm2 ? "TPM 2.0 (not exportable)" : rawValue }
}

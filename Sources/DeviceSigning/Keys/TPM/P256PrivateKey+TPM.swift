import Foundation

/// Hardware-bound keys: P-256 keys whose private half is generated in, and never leaves, a TPM 2.0
/// reached through OpenSSL's tpm2 provider. Such a key is an ordinary `P256.Signing.PrivateKey`:
/// `signature(for:)`, `publicKey`, the JWK and its thumbprint work as for software keys, so a
/// Device-Signature signer, registration and rotation take it unchanged. Every export of private
/// material (`rawRepresentation`, `derRepresentation`, `pemRepresentation`,
/// `encryptedPEMRepresentation`, the private JWK) throws `.keyNotExportable`.
///
/// Failures name the TPM that was tried: `.tpmUnavailable` (no provider, no answer, timeout),
/// `.tpmKeyForeign` (a key file another TPM made), `.tpmRefused` (the TPM said no).
extension P256.Signing.PrivateKey {
    static let tss2PEMLabel = "TSS2 PRIVATE KEY"

    /// Generates a new key inside the TPM of `tpm`. Store `tss2PEMRepresentation` (or save the key
    /// in a `KeyStore`) to use it again.
    public init(generatingInTPM tpm: TPMConfiguration) throws {
        self = try TPMDeadline.within(seconds: tpm.timeoutSeconds) { try TPMSession.open(tpm).generateKey() }
    }

    /// Loads a `TSS2 PRIVATE KEY` PEM (as written by `tss2PEMRepresentation` or `openssl genpkey
    /// -provider tpm2 -provider default -algorithm EC -pkeyopt group:P-256`) into the TPM of `tpm`.
    /// Throws `.malformedEncoding` for text that is not such a PEM, `.invalidKey` for a key not
    /// generated inside a TPM or one that needs a password or a policy (``TSS2KeyProvenance``),
    /// `.tpmKeyForeign` when that TPM did not make the key or lacks its parent, and
    /// `.tpmUnavailable` / `.tpmRefused` as described above.
    public init(tss2PEM: String, tpm: TPMConfiguration) throws {
        // Read as a secret: text handed here by mistake may be a software private key, whose DER
        // then stays in zeroed memory until it is refused.
        try self.init(tss2Document: PEM.decodeSecret(SecureBytes(tss2PEM.utf8)), tpm: tpm)
    }

    /// `init(tss2PEM:tpm:)` from the text's decoded block, refused unless it is a `TSS2 PRIVATE
    /// KEY` before any of it is copied out.
    init(tss2Document document: PEM.SecretDocument, tpm: TPMConfiguration) throws {
        guard document.label == Self.tss2PEMLabel else {
            throw DeviceSigningError(
                .malformedEncoding,
                "Expected a PEM \(Self.tss2PEMLabel) block, found \(document.label).")
        }
        // Not secret: the key blob the TPM wrapped, which only that TPM can load.
        let der = document.der.withUnsafeBytes { Array($0) }
        // A key whose private half was made outside a TPM is refused before any TPM is asked.
        try TSS2KeyProvenance.check(der: der)
        // Only the one checked block reaches OpenSSL.
        let text = SecureBytes(PEM.encode(label: Self.tss2PEMLabel, der: der).utf8)
        self = try TPMDeadline.within(seconds: tpm.timeoutSeconds) { try TPMSession.open(tpm).key(fromKeyFile: text) }
    }

    /// Runs `body`, an operation with this key, within one TPM timeout in all when the key is in a
    /// TPM (``TPMDeadline``): reconnecting first, if its connection failed, takes from that time.
    func withinTPMDeadline<T>(_ body: () throws -> T) rethrows -> T {
        guard let handle = tpmHandle else { return try body() }
        return try TPMDeadline.within(seconds: handle.configuration.timeoutSeconds, body)
    }

    /// Whether the private half is held by a TPM (and so is never exportable).
    public var isHardwareBound: Bool { tpmHandle != nil }

    /// The key's `TSS2 PRIVATE KEY` PEM: the key blob the TPM wrapped under its own storage key.
    /// It is useless without that TPM, yet is kept like any key file. Throws `.invalidKey` for a
    /// software key.
    public var tss2PEMRepresentation: String {
        get throws {
            guard let handle = tpmHandle else {
                throw DeviceSigningError(
                    .invalidKey,
                    "This is a software key; only a TPM key has a \(Self.tss2PEMLabel) form.")
            }
            return handle.keyFile.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// Whether `text` is a `TSS2 PRIVATE KEY` PEM: by the label of the block that is read, the
    /// one a software key's reading takes too (so a software key followed by a TSS2 block is a
    /// software key); the block is not decoded, and may be damaged.
    static func isTSS2PEM(_ text: SecureBytes) -> Bool {
        PEM.label(of: text) == tss2PEMLabel
    }
}

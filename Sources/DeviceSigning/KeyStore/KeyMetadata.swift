import Foundation

/// The public record of a key in a `KeyStore`, kept in `<keyId>.json` next to the key.
///
/// Nothing here is secret. `keyId`, `jwk`, `created` and `kdf` are fixed when the key is saved;
/// `dispatchTargetId`, `deviceId` and `server` can change later through
/// `KeyStore.updateMetadata(_:_:)`, for example to store the dispatch target id the backend
/// returned at registration.
public struct KeyMetadata: Codable, Sendable, Hashable {
    /// The RFC 7638 JWK thumbprint of the public key (43 base64url characters).
    public let keyId: String
    /// The public key as a JWK.
    public let jwk: JWK
    /// The dispatch target the backend registered for this key, once known.
    public var dispatchTargetId: String?
    /// The device this key belongs to.
    public var deviceId: String?
    /// The base URL of the backend the key is registered with.
    public var server: String?
    /// The private CA bundle (a PEM file's absolute path) the backend's certificate must chain to,
    /// when it is not one of the system CAs; checked at registration and used for every request.
    public var serverCAFile: String?
    /// SPKI pins (`sha256//BASE64`) the backend's certificate must match as well as its chain.
    public var serverPins: [String]?
    /// When the key was saved, in whole seconds (stored as ISO 8601).
    public let created: Date
    /// How the private key file is protected, for example
    /// `scrypt(N=16384, r=8, p=1), AES-256-CBC`; set by the store when the key is saved.
    public internal(set) var kdf: String?
    /// Where the private key lives; set by the store. nil (and absent from older records): a
    /// software key. `.tpm2`: a TPM-bound key, whose `kdf` reads `TPM 2.0 (not exportable)`.
    public internal(set) var protection: KeyProtection?

    /// The public JWK (`"use":"enc"`) of the entry's encryption key, the P-256 key the backend
    /// encrypts operations answers to (docs/ARCHITECTURE.md, "Encrypted answers"); set by the
    /// store. nil (and absent from older records) until the entry has one: `KeyStore` adds it at
    /// the next registration.
    public internal(set) var encryptionJWK: JWK?

    /// Whether the private key is held by a TPM (and so can never be exported).
    public var isHardwareBound: Bool { protection?.isHardwareBound ?? false }

    /// The `kdf` of a software key saved without encryption (`allowUnencrypted`).
    public static let unencryptedKDF = "none (unencrypted)"

    /// Whether opening the private key needs the passphrase: a software key stored encrypted. A
    /// TPM-bound key and a key stored unencrypted do not.
    public var needsPassphrase: Bool { !isHardwareBound && kdf != Self.unencryptedKDF }

    /// A record for `publicKey`. `created` is truncated to whole seconds, as it is stored.
    public init(
        publicKey: P256.Signing.PublicKey, dispatchTargetId: String? = nil, deviceId: String? = nil,
        server: String? = nil, created: Date = Date()
    ) {
        self.keyId = publicKey.jwkThumbprint
        self.jwk = publicKey.jwk
        self.dispatchTargetId = dispatchTargetId
        self.deviceId = deviceId
        self.server = server
        self.created = Date(timeIntervalSince1970: created.timeIntervalSince1970.rounded(.down))
        self.kdf = nil
        self.protection = nil
        self.encryptionJWK = nil
    }

    /// The public key of the record (checked: on the curve, not infinity).
    public func publicKey() throws -> P256.Signing.PublicKey {
        try jwk.publicKey()
    }

    /// `self` with the updatable members of `changed`; the identity of the record stays.
    func updated(from changed: KeyMetadata) -> KeyMetadata {
        var result = self
        result.dispatchTargetId = changed.dispatchTargetId
        result.deviceId = changed.deviceId
        result.server = changed.server
        result.serverCAFile = changed.serverCAFile
        result.serverPins = changed.serverPins
        return result
    }

    // MARK: The stored form

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var data = try encoder.encode(self)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// Decodes and checks a stored record: well-formed without duplicate member names (which
    /// decoders resolve differently), a valid P-256 JWK, and a key id that is the JWK's
    /// thumbprint and the one the file is named after.
    static func decode(_ data: Data, expectedKeyId: String, file: String) throws -> KeyMetadata {
        do throws(StrictJSON.Violation) {
            try StrictJSON.requireUniqueMemberNames(data)
        } catch .notJSON {
            throw DeviceSigningError(
                .corruptKeyFile,
                "\(file) is not a valid key record (JSON with keyId, jwk and created).")
        } catch {
            throw DeviceSigningError(
                .corruptKeyFile,
                "\(file) is not a valid key record: \(error); the file was edited.")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let metadata: KeyMetadata
        do {
            metadata = try decoder.decode(KeyMetadata.self, from: data)
        } catch {
            throw DeviceSigningError(
                .corruptKeyFile, "\(file) is not a valid key record (JSON with keyId, jwk and created).")
        }
        guard (try? metadata.publicKey()) != nil else {
            throw DeviceSigningError(.corruptKeyFile, "\(file) does not hold a valid P-256 public JWK.")
        }
        if let encryption = metadata.encryptionJWK {
            guard encryption.use == "enc", (try? encryption.publicKey()) != nil,
                encryption.thumbprint != metadata.jwk.thumbprint
            else {
                throw DeviceSigningError(
                    .corruptKeyFile,
                    "\(file) has an encryptionJWK that is not a P-256 public "
                        + "JWK with \"use\":\"enc\" of its own; the file was edited.")
            }
        }
        guard metadata.keyId == expectedKeyId, metadata.jwk.thumbprint == expectedKeyId else {
            throw DeviceSigningError(
                .corruptKeyFile,
                "\(file) describes key \(metadata.jwk.thumbprint), not \(expectedKeyId); the file was renamed or edited."
            )
        }
        return metadata
    }
}

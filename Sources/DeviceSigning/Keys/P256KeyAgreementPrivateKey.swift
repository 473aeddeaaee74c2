import Foundation

extension P256.KeyAgreement {
    /// A P-256 private key for ECDH: the recipient key of a JWE with ECDH-ES.
    ///
    /// The representations, their checks and their zeroing are those of `P256.Signing.PrivateKey`,
    /// which this type wraps privately: the same P-256 material, but no way to sign with it.
    /// The description shows the key id (the public key's JWK thumbprint) and nothing secret.
    public struct PrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
        private let key: P256.Signing.PrivateKey

        /// Adopts `key`'s P-256 material for key agreement only (the key store's encryption key,
        /// which the store keeps in a file of its own; never a signing key of the store).
        init(_ key: P256.Signing.PrivateKey) {
            self.key = key
        }

        /// The wrapped material, for the key store to write it as it writes signing keys.
        var material: P256.Signing.PrivateKey { key }

        /// Whether the private half is held by a TPM (and so is never exportable).
        public var isHardwareBound: Bool { key.isHardwareBound }

        /// The matching public key.
        public var publicKey: PublicKey { PublicKey(key.publicKey) }

        /// Generates a new random key.
        public init() throws {
            self.init(try P256.Signing.PrivateKey())
        }

        /// A key from its 32-byte big-endian scalar (in [1, n-1]).
        public init<Bytes: DataProtocol>(rawRepresentation: Bytes) throws {
            self.init(try P256.Signing.PrivateKey(rawRepresentation: rawRepresentation))
        }

        /// A key from ANSI X9.63 form: 0x04 || x || y || d (97 bytes). The point must match d.
        public init<Bytes: DataProtocol>(x963Representation: Bytes) throws {
            self.init(try P256.Signing.PrivateKey(x963Representation: x963Representation))
        }

        /// A key from DER: PKCS#8 PrivateKeyInfo or SEC1 ECPrivateKey.
        public init<Bytes: DataProtocol>(derRepresentation: Bytes) throws {
            self.init(try P256.Signing.PrivateKey(derRepresentation: derRepresentation))
        }

        /// A key from unencrypted PEM: `PRIVATE KEY` (PKCS#8) or `EC PRIVATE KEY` (SEC1).
        public init(pemRepresentation: String) throws {
            self.init(try P256.Signing.PrivateKey(pemRepresentation: pemRepresentation))
        }

        /// A key from unencrypted PEM text held as `SecureBytes` (zeroed when released).
        public init(pemRepresentation: SecureBytes) throws {
            self.init(try P256.Signing.PrivateKey(pemRepresentation: pemRepresentation))
        }

        /// A key from PEM `ENCRYPTED PRIVATE KEY` (PKCS#8, PBES2), as the key store writes it.
        public init(encryptedPEM: String, passphrase: SecureBytes) throws {
            self.init(try P256.Signing.PrivateKey(encryptedPEM: encryptedPEM, passphrase: passphrase))
        }

        /// A key from a private JWK (kty EC, crv P-256, d, and x/y that must match d).
        public init<Bytes: DataProtocol>(jwkRepresentation: Bytes) throws {
            self.init(try P256.Signing.PrivateKey(jwkRepresentation: jwkRepresentation))
        }

        /// The 32-byte private scalar.
        public var rawRepresentation: SecureBytes {
            get throws { try key.rawRepresentation }
        }

        /// 0x04 || x || y || d (97 bytes).
        public var x963Representation: SecureBytes {
            get throws { try key.x963Representation }
        }

        /// PKCS#8 PrivateKeyInfo DER (unencrypted).
        public var derRepresentation: SecureBytes {
            get throws { try key.derRepresentation }
        }

        /// PKCS#8 PEM (`PRIVATE KEY`, unencrypted), as bytes so it can be zeroed.
        public var pemRepresentation: SecureBytes {
            get throws { try key.pemRepresentation }
        }

        /// PEM `ENCRYPTED PRIVATE KEY` under `passphrase`, exactly as for signing keys.
        public func encryptedPEMRepresentation(
            passphrase: SecureBytes, kdf: KeyDerivation = .default
        ) throws -> String {
            try key.encryptedPEMRepresentation(passphrase: passphrase, kdf: kdf)
        }

        /// The JWK JSON of this key. With `includingPrivateKey: true` it contains `d` and is secret.
        public func jwkRepresentation(includingPrivateKey: Bool) throws -> SecureBytes {
            try key.jwkRepresentation(includingPrivateKey: includingPrivateKey)
        }

        /// The ECDH shared secret Z with `publicKeyShare` (the 32-byte x coordinate of the shared
        /// point, SEC 1 §3.3.1). Secret: feed it to a KDF, never use it as a key directly.
        public func sharedSecretFromKeyAgreement(with publicKeyShare: PublicKey) throws -> SecureBytes {
            // A TPM key derives in its own library context, on its session's worker.
            if isHardwareBound {
                return try key.withinTPMDeadline { try key.usableBacking().sharedSecret(with: publicKeyShare.backing) }
            }
            return try JWEBackend.sharedSecret(privateKey: key.softwareBacking(), publicKey: publicKeyShare.backing)
        }

        /// The same with a JWE's `epk`, decoded and checked when its header was parsed.
        func sharedSecretFromKeyAgreement(withPeer peer: PeerPublicKey) throws -> SecureBytes {
            if isHardwareBound {
                return try sharedSecretFromKeyAgreement(with: PublicKey(x963Representation: peer.point))
            }
            return try JWEBackend.sharedSecret(privateKey: key.softwareBacking(), peer: peer)
        }

        public var description: String { "P256.KeyAgreement.PrivateKey(keyId: \(publicKey.jwkThumbprint))" }
        public var debugDescription: String { description }
    }
}

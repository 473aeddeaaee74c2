import Foundation

extension P256.KeyAgreement {
    /// A P-256 public key for ECDH: the key a JWE is encrypted to, or a JWE's ephemeral `epk`.
    ///
    /// Built through `P256.Signing.PublicKey`'s constructors, so every one checks that the point
    /// is on the curve and not the point at infinity: an invalid-curve point never reaches a key
    /// agreement. Equality and hashing compare the point.
    public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
        private let key: P256.Signing.PublicKey

        init(_ key: P256.Signing.PublicKey) {
            self.key = key
        }

        /// The owned OpenSSL key, for the key agreement.
        var backing: EVPKey { key.backing }

        /// x || y (64 bytes).
        public init<Bytes: DataProtocol>(rawRepresentation: Bytes) throws {
            self.init(try P256.Signing.PublicKey(rawRepresentation: rawRepresentation))
        }

        /// 0x04 || x || y (65 bytes). Compressed points are refused here; see `init(compressedRepresentation:)`.
        public init<Bytes: DataProtocol>(x963Representation: Bytes) throws {
            self.init(try P256.Signing.PublicKey(x963Representation: x963Representation))
        }

        /// 0x02/0x03 || x (33 bytes): accepted only through this explicit constructor.
        public init<Bytes: DataProtocol>(compressedRepresentation: Bytes) throws {
            self.init(try P256.Signing.PublicKey(compressedRepresentation: compressedRepresentation))
        }

        /// DER SubjectPublicKeyInfo.
        public init<Bytes: DataProtocol>(derRepresentation: Bytes) throws {
            self.init(try P256.Signing.PublicKey(derRepresentation: derRepresentation))
        }

        /// PEM `PUBLIC KEY` (SubjectPublicKeyInfo).
        public init(pemRepresentation: String) throws {
            self.init(try P256.Signing.PublicKey(pemRepresentation: pemRepresentation))
        }

        /// A public JWK (kty EC, crv P-256, 32-byte coordinates on the curve).
        public init(jwk: JWK) throws {
            self.init(try jwk.publicKey())
        }

        /// x || y (64 bytes).
        public var rawRepresentation: Data { key.rawRepresentation }
        /// 0x04 || x || y (65 bytes).
        public var x963Representation: Data { key.x963Representation }
        /// 0x02/0x03 || x (33 bytes).
        public var compressedRepresentation: Data { key.compressedRepresentation }
        /// DER SubjectPublicKeyInfo.
        public var derRepresentation: Data { key.derRepresentation }
        /// PEM `PUBLIC KEY`.
        public var pemRepresentation: String { key.pemRepresentation }
        /// This key as a public JWK.
        public var jwk: JWK { key.jwk }
        /// The RFC 7638 JWK thumbprint.
        public var jwkThumbprint: String { key.jwkThumbprint }

        public var description: String { "P256.KeyAgreement.PublicKey(keyId: \(jwkThumbprint))" }
    }
}

import Foundation

extension P256.Signing {
    /// An ECDSA P-256 signature.
    ///
    /// Held as the fixed-size r||s (RFC 7518 §3.4, IEEE P1363), which is what JWS uses. Both
    /// constructors are strict: raw must be exactly 64 bytes; DER must be exactly one minimal
    /// ECDSA-Sig-Value of two non-negative integers that fit in 32 bytes. Whether r and s are in
    /// [1, n-1] is decided at verification.
    public struct ECDSASignature: Sendable, Hashable {
        /// r || s, 32 bytes each, big-endian.
        public let rawRepresentation: Data

        init(validatedRaw: Data) {
            rawRepresentation = validatedRaw
        }

        public init<Bytes: DataProtocol>(rawRepresentation: Bytes) throws {
            let raw = Data(rawRepresentation)
            guard raw.count == P256Backend.rawSignatureBytes else {
                throw DeviceSigningError(
                    .malformedSignature, "A raw P-256 signature is exactly 64 bytes (r || s); got \(raw.count).")
            }
            self.rawRepresentation = raw
        }

        public init<Bytes: DataProtocol>(derRepresentation: Bytes) throws {
            let der = Array(derRepresentation)
            guard let raw = der.withUnsafeBytes({ P256Backend.derToRaw($0) }) else {
                throw DeviceSigningError(.malformedSignature, "Not a strict DER ECDSA-Sig-Value for P-256.")
            }
            self.rawRepresentation = Data(raw)
        }

        /// DER ECDSA-Sig-Value.
        public var derRepresentation: Data {
            // 64 valid bytes always encode; an allocation failure yields empty data, which never verifies.
            Data(rawRepresentation.withUnsafeBytes { P256Backend.rawToDER($0) } ?? [])
        }
    }
}

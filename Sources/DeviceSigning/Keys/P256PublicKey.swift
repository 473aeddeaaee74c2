import Foundation

extension P256.Signing {
    /// A P-256 public key for verifying ECDSA-SHA-256 signatures.
    ///
    /// Every constructor checks that the point is on the curve and not the point at infinity.
    /// Equality and hashing compare the point.
    public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
        let backing: EVPKey
        /// 0x04 || x || y.
        public let x963Representation: Data

        init(backing: EVPKey) throws {
            self.backing = backing
            self.x963Representation = Data(try P256Backend.publicPoint(of: backing))
        }

        /// x || y (64 bytes).
        public init<Bytes: DataProtocol>(rawRepresentation: Bytes) throws {
            let raw = Array(rawRepresentation)
            guard raw.count == 64 else {
                throw DeviceSigningError(.invalidKey, "A raw P-256 public key is 64 bytes (x || y); got \(raw.count).")
            }
            try self.init(x963Representation: [0x04] + raw)
        }

        /// 0x04 || x || y (65 bytes). Compressed points are refused here; see `init(compressedRepresentation:)`.
        public init<Bytes: DataProtocol>(x963Representation: Bytes) throws {
            let point = Array(x963Representation)
            self.backing = try point.withUnsafeBytes { try P256Backend.publicKey(point: $0, allowCompressed: false) }
            // The key was built from exactly these 65 bytes (coordinates below p): no need to read them back.
            self.x963Representation = Data(point)
        }

        /// 0x02/0x03 || x (33 bytes): accepted only through this explicit constructor.
        public init<Bytes: DataProtocol>(compressedRepresentation: Bytes) throws {
            let point = Array(compressedRepresentation)
            guard point.count == 33 else {
                throw DeviceSigningError(.invalidKey, "A compressed P-256 point is 33 bytes; got \(point.count).")
            }
            try self.init(
                backing: point.withUnsafeBytes { try P256Backend.publicKey(point: $0, allowCompressed: true) })
        }

        /// DER SubjectPublicKeyInfo.
        public init<Bytes: DataProtocol>(derRepresentation: Bytes) throws {
            let der = Array(derRepresentation)
            try self.init(backing: der.withUnsafeBytes { try P256Backend.publicKey(spki: $0) })
        }

        /// PEM `PUBLIC KEY` (SubjectPublicKeyInfo).
        public init(pemRepresentation: String) throws {
            let document = try PEM.decode(pemRepresentation)
            guard document.label == "PUBLIC KEY" else {
                throw DeviceSigningError(
                    .malformedEncoding, "Expected a PEM PUBLIC KEY block, found \(document.label).")
            }
            try self.init(derRepresentation: document.der)
        }

        /// x || y (64 bytes).
        public var rawRepresentation: Data { Data(x963Representation.dropFirst()) }

        /// 0x02/0x03 || x (33 bytes).
        public var compressedRepresentation: Data {
            let parity: UInt8 = (x963Representation.last ?? 0) & 1 == 0 ? 0x02 : 0x03
            return Data([parity]) + x963Representation.dropFirst().prefix(32)
        }

        /// DER SubjectPublicKeyInfo.
        public var derRepresentation: Data {
            // Encoding a valid in-memory key cannot fail short of allocation failure.
            (try? P256Backend.spkiDER(of: backing)) ?? Data()
        }

        /// PEM `PUBLIC KEY`.
        public var pemRepresentation: String { PEM.encode(label: "PUBLIC KEY", der: derRepresentation) }

        /// Verifies an ECDSA signature over SHA-256(`data`). Never throws: anything wrong is `false`.
        public func isValidSignature<D: DataProtocol>(_ signature: ECDSASignature, for data: D) -> Bool {
            if let result = data.withContiguousStorageIfAvailable({
                isValid(signature, message: UnsafeRawBufferPointer($0))
            }) {
                return result
            }
            return Array(data).withUnsafeBytes { isValid(signature, message: $0) }
        }

        func isValid(_ signature: ECDSASignature, message: UnsafeRawBufferPointer) -> Bool {
            var digest = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            return withUnsafeMutableBytes(of: &digest) { digestBuffer in
                guard P256Backend.sha256(message, into: digestBuffer) else {
                    OpenSSLErrorQueue.clear()
                    return false
                }
                return signature.rawRepresentation.withUnsafeBytes { raw in
                    backing.verifyDigest(UnsafeRawBufferPointer(digestBuffer), raw: raw)
                }
            }
        }

        public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
            lhs.x963Representation == rhs.x963Representation
        }
        public func hash(into hasher: inout Hasher) { hasher.combine(x963Representation) }

        public var description: String { "P256.Signing.PublicKey(keyId: \(jwkThumbprint))" }
    }
}

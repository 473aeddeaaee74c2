import Foundation

extension P256.Signing {
    /// A P-256 private key for ECDSA with SHA-256.
    ///
    /// Parsed once into an owned OpenSSL key; `signature(for:)` reuses it and never re-parses.
    /// Exports of secret material return `SecureBytes`, zeroed when released. The description
    /// shows the key id (the public key's JWK thumbprint) and nothing secret.
    public struct PrivateKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
        private let storage: Storage
        /// The matching public key (computed once).
        public let publicKey: PublicKey

        /// A software key's OpenSSL key, or a TPM key's handle, which loads it again when its
        /// connection failed.
        private enum Storage: Sendable {
            case software(EVPKey)
            case tpm(TPMKeyHandle)
        }

        init(backing: EVPKey) throws {
            try self.init(storage: .software(backing), backing: backing)
        }

        /// A key held by a TPM, `loaded` on a session of its handle's (call on that session's worker).
        init(tpm handle: TPMKeyHandle, loaded: EVPKey) throws {
            try self.init(storage: .tpm(handle), backing: loaded)
        }

        private init(storage: Storage, backing: EVPKey) throws {
            guard backing.isPrivate else {
                throw DeviceSigningError(.invalidKey, "The key holds no private scalar.")
            }
            self.storage = storage
            self.publicKey = try PublicKey(backing: P256Backend.publicOnly(backing))
        }

        /// The OpenSSL key of a software key, for exports and software ECDH; `.keyNotExportable`
        /// for a TPM key, whose private half never leaves the TPM.
        func softwareBacking() throws -> EVPKey {
            switch storage {
            case .software(let key): return key
            case .tpm: throw EVPKey.notExportable
            }
        }

        /// The OpenSSL key for an operation: a TPM key whose connection failed is loaded again.
        func usableBacking() throws -> EVPKey {
            switch storage {
            case .software(let key): key
            case .tpm(let handle): try handle.usable()
            }
        }

        /// The handle of a TPM key; nil for a software key.
        var tpmHandle: TPMKeyHandle? {
            if case .tpm(let handle) = storage { handle } else { nil }
        }

        /// Generates a new random key.
        public init() throws {
            try self.init(backing: P256Backend.generate())
        }

        /// A key from its 32-byte big-endian scalar (in [1, n-1]).
        public init<Bytes: DataProtocol>(rawRepresentation: Bytes) throws {
            let scalar = SecureBytes(rawRepresentation)
            try self.init(backing: scalar.withUnsafeBytes { try P256Backend.privateKey(scalar: $0) })
        }

        /// A key from ANSI X9.63 form: 0x04 || x || y || d (97 bytes). The point must match d.
        public init<Bytes: DataProtocol>(x963Representation: Bytes) throws {
            let bytes = SecureBytes(x963Representation)
            guard bytes.count == 1 + 64 + 32 else {
                throw DeviceSigningError(
                    .invalidKey, "An X9.63 P-256 private key is 97 bytes (04 || x || y || d); got \(bytes.count).")
            }
            let key = try bytes.withUnsafeBytes {
                try P256Backend.privateKey(scalar: UnsafeRawBufferPointer(rebasing: $0[65...]))
            }
            let expected = try P256Backend.publicPoint(of: key)
            let matches = bytes.withUnsafeBytes { Array($0[0..<65]) == expected }
            guard matches else {
                throw DeviceSigningError(.invalidKey, "The X9.63 public point does not belong to the private scalar.")
            }
            try self.init(backing: key)
        }

        /// A key from DER: PKCS#8 PrivateKeyInfo or SEC1 ECPrivateKey (`EC PRIVATE KEY`).
        public init<Bytes: DataProtocol>(derRepresentation: Bytes) throws {
            let der = SecureBytes(derRepresentation)
            try self.init(backing: der.withUnsafeBytes { try P256Backend.privateKey(der: $0) })
        }

        /// A key from unencrypted PEM: `PRIVATE KEY` (PKCS#8) or `EC PRIVATE KEY` (SEC1).
        /// Encrypted keys (`ENCRYPTED PRIVATE KEY`) are opened with `init(encryptedPEM:passphrase:)`.
        /// A `String` cannot be zeroed: text read from a file is better given as `SecureBytes`.
        public init(pemRepresentation: String) throws {
            try self.init(pemRepresentation: SecureBytes(pemRepresentation.utf8))
        }

        /// A key from unencrypted PEM text held as `SecureBytes`, so that no copy of it outlives
        /// the call unzeroed; otherwise as `init(pemRepresentation:)` of a `String`.
        public init(pemRepresentation: SecureBytes) throws {
            let document = try PEM.decodeSecret(pemRepresentation)
            switch document.label {
            case "PRIVATE KEY", "EC PRIVATE KEY":
                try self.init(backing: document.der.withUnsafeBytes { try P256Backend.privateKey(der: $0) })
            case "ENCRYPTED PRIVATE KEY":
                throw DeviceSigningError(.passphraseRequired, "The PEM key is encrypted; open it with a passphrase.")
            default:
                throw DeviceSigningError(
                    .malformedEncoding, "Expected a PEM PRIVATE KEY or EC PRIVATE KEY block, found \(document.label).")
            }
        }

        /// The 32-byte private scalar.
        public var rawRepresentation: SecureBytes {
            get throws { try P256Backend.privateScalar(of: softwareBacking()) }
        }

        /// 0x04 || x || y || d (97 bytes).
        public var x963Representation: SecureBytes {
            get throws {
                let scalar = try rawRepresentation
                let point = publicKey.x963Representation
                return SecureBytes(count: 97) { buffer in
                    buffer.copyBytes(from: point)
                    scalar.withUnsafeBytes {
                        UnsafeMutableRawBufferPointer(rebasing: buffer[65...]).copyMemory(from: $0)
                    }
                }
            }
        }

        /// PKCS#8 PrivateKeyInfo DER (unencrypted).
        public var derRepresentation: SecureBytes {
            get throws { try P256Backend.pkcs8DER(of: softwareBacking()) }
        }

        /// PKCS#8 PEM (`PRIVATE KEY`, unencrypted). The text is returned as bytes so it can be zeroed.
        public var pemRepresentation: SecureBytes {
            get throws {
                let der = try derRepresentation
                return der.withUnsafeBytes { PEM.encodeSecret(label: "PRIVATE KEY", der: $0) }
            }
        }

        /// Signs SHA-256(`data`) with ECDSA (randomized nonce).
        public func signature<D: DataProtocol>(for data: D) throws -> ECDSASignature {
            if let signature = try data.withContiguousStorageIfAvailable({
                try signature(message: UnsafeRawBufferPointer($0))
            }) {
                return signature
            }
            return try Array(data).withUnsafeBytes { try signature(message: $0) }
        }

        func signature(message: UnsafeRawBufferPointer) throws -> ECDSASignature {
            var digest = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            return try withUnsafeMutableBytes(of: &digest) { digestBuffer in
                guard P256Backend.sha256(message, into: digestBuffer) else {
                    throw OpenSSLErrorQueue.error(.openSSLFailure, "SHA-256 of the message to sign failed.")
                }
                var raw = Data(count: P256Backend.rawSignatureBytes)
                try raw.withUnsafeMutableBytes { out in
                    try withinTPMDeadline {
                        try usableBacking().signDigest(UnsafeRawBufferPointer(digestBuffer), into: out)
                    }
                }
                return ECDSASignature(validatedRaw: raw)
            }
        }

        public var description: String { "P256.Signing.PrivateKey(keyId: \(publicKey.jwkThumbprint))" }
        public var debugDescription: String { description }
    }
}

import Foundation

extension JWE {
    /// The content encryption algorithms (`enc`) this package accepts (RFC 7518 §5.1): AES-GCM
    /// and AES-CBC with HMAC-SHA-2. Each fixes the content key, IV and tag lengths exactly.
    public enum ContentEncryption: String, Sendable, Hashable, CaseIterable {
        case a128GCM = "A128GCM"
        case a192GCM = "A192GCM"
        case a256GCM = "A256GCM"
        case a128CBCHS256 = "A128CBC-HS256"
        case a192CBCHS384 = "A192CBC-HS384"
        case a256CBCHS512 = "A256CBC-HS512"

        /// The content encryption key length. For CBC-HMAC: the MAC key and the AES key together.
        public var keyBytes: Int {
            switch self {
            case .a128GCM: 16
            case .a192GCM: 24
            case .a256GCM: 32
            case .a128CBCHS256: 32
            case .a192CBCHS384: 48
            case .a256CBCHS512: 64
            }
        }

        var isGCM: Bool {
            switch self {
            case .a128GCM, .a192GCM, .a256GCM: true
            case .a128CBCHS256, .a192CBCHS384, .a256CBCHS512: false
            }
        }

        /// 96 bits for GCM, 128 bits (one AES block) for CBC.
        public var ivBytes: Int { isGCM ? 12 : 16 }

        /// 128 bits for GCM; for CBC-HMAC the truncated HMAC, half the content key.
        public var tagBytes: Int { isGCM ? 16 : keyBytes / 2 }

        /// The ciphertext length of a plaintext of `count` bytes (CBC pads with PKCS #7).
        func ciphertextBytes(plaintextBytes count: Int) -> Int {
            isGCM ? count : (count / JWEBackend.blockBytes + 1) * JWEBackend.blockBytes
        }

        /// Whether `count` can be a ciphertext length at all: CBC needs whole, non-zero blocks.
        func isPossibleCiphertextLength(_ count: Int) -> Bool {
            isGCM || (count > 0 && count % JWEBackend.blockBytes == 0)
        }

        func seal(
            key: SecureBytes, iv: [UInt8], aad: [UInt8], plaintext: UnsafeRawBufferPointer
        ) throws -> JWEBackend.Sealed {
            isGCM
                ? try JWEBackend.gcmSeal(key: key, iv: iv, aad: aad, plaintext: plaintext)
                : try JWEBackend.cbcHMACSeal(key: key, iv: iv, aad: aad, plaintext: plaintext)
        }

        func open(key: SecureBytes, iv: [UInt8], aad: [UInt8], ciphertext: [UInt8], tag: [UInt8]) throws -> Data {
            isGCM
                ? try JWEBackend.gcmOpen(key: key, iv: iv, aad: aad, ciphertext: ciphertext, tag: tag)
                : try JWEBackend.cbcHMACOpen(key: key, iv: iv, aad: aad, ciphertext: ciphertext, tag: tag)
        }
    }
}

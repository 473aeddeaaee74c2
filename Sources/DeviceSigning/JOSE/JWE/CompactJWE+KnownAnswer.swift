extension CompactJWE {
    /// The values a known answer was encrypted with where an encryption draws fresh ones: the
    /// ephemeral private key (raw 32-byte scalar), the content key (key-wrapping algorithms only)
    /// and the IV.
    package struct PinnedValues: Sendable {
        let ephemeral: P256.KeyAgreement.PrivateKey
        let contentKey: SecureBytes?
        let iv: [UInt8]

        package init(ephemeralScalar: [UInt8], contentKey: [UInt8]?, iv: [UInt8]) throws {
            ephemeral = try P256.KeyAgreement.PrivateKey(rawRepresentation: ephemeralScalar)
            self.contentKey = contentKey.map { SecureBytes($0) }
            self.iv = iv
        }
    }

    /// Encrypts as ``encrypt(_:to:algorithm:encryption:keyId:partyUInfo:partyVInfo:)`` does, with
    /// `pinned` in place of fresh values, so that a known answer (Vectors/jwe-ecdh-es.json) is
    /// reproduced byte for byte. For vectors only: an ephemeral key or IV used twice breaks the
    /// encryption. Throws `.invalidKey` when a pinned value has the wrong size or is missing.
    package static func encrypt(
        _ plaintext: [UInt8], to recipient: P256.KeyAgreement.PublicKey, algorithm: JWE.Algorithm,
        encryption: JWE.ContentEncryption, keyId: String?, partyUInfo: [UInt8], partyVInfo: [UInt8],
        pinned: PinnedValues
    ) throws -> String {
        let inputs = Inputs(
            recipient: recipient, algorithm: algorithm, encryption: encryption, keyId: keyId,
            partyUInfo: partyUInfo, partyVInfo: partyVInfo)
        return try plaintext.withUnsafeBytes { try encrypt($0, inputs, random: PinnedRandomSource(pinned)) }
    }

    /// Serves the pinned values in the order an encryption asks for them: the content key (key
    /// wrapping only), then the IV.
    private final class PinnedRandomSource: JWERandomSource {
        private let ephemeral: P256.KeyAgreement.PrivateKey
        private var queue: [SecureBytes]

        init(_ pinned: PinnedValues) {
            ephemeral = pinned.ephemeral
            queue = (pinned.contentKey.map { [$0] } ?? []) + [SecureBytes(pinned.iv)]
        }

        func ephemeralKey() throws -> P256.KeyAgreement.PrivateKey { ephemeral }

        func bytes(count: Int) throws -> SecureBytes {
            guard let next = queue.first, next.count == count else {
                throw DeviceSigningError(.invalidKey, "No pinned value of \(count) bytes is next.")
            }
            queue.removeFirst()
            return next
        }
    }
}

internal import CDeviceSigningShim

/// ECDH for software and TPM keys alike (the JWE encryption key's derive).
extension EVPKey {
    /// ECDH with the public key `peer`: the shared x coordinate (32 bytes), through the same
    /// EVP_PKEY_derive for software and TPM keys.
    func sharedSecret(with peer: EVPKey) throws -> SecureBytes {
        guard let session else {
            guard let secret = deriveHere(with: peer) else {
                throw OpenSSLErrorQueue.error(.openSSLFailure, "ECDH key agreement failed.")
            }
            return secret
        }
        return try session.worker.perform("derive a shared secret") { [self] in
            guard let secret = deriveHere(with: peer) else {
                throw TPMFailure.error("derive a shared secret", target: session.target, withLoadedKey: true)
            }
            return secret
        }
    }

    fileprivate func deriveHere(with peer: EVPKey) -> SecureBytes? {
        struct Failed: Error {}
        return try? SecureBytes(count: P256Backend.scalarBytes) { buffer in
            guard
                dss_ecdh_derive(
                    pointer, libraryContext, peer.pointer,
                    buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count) == 1
            else {
                throw Failed()
            }
        }
    }
}

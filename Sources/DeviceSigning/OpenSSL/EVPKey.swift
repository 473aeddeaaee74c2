internal import CDeviceSigningShim
internal import COpenSSL

/// An owned OpenSSL `EVP_PKEY` holding a P-256 key, plus kept signing/verifying contexts.
///
/// The key is parsed once; every signature reuses it. OpenSSL 3.0 spends a noticeable share of
/// a signature's time creating and initialising an `EVP_PKEY_CTX` (provider fetches under locks),
/// so initialised contexts are kept in small pools and lent to one operation at a time.
///
/// A TPM key (made or read by OpenSSL's tpm2 provider in a `TPMSession`'s library context) is
/// the same type: the same signing code runs, with the key's library context, on the session's
/// worker; its private half never leaves the TPM, so it is never exportable.
final class EVPKey: @unchecked Sendable {
    // @unchecked: `pointer` is immutable after init and OpenSSL allows concurrent use of one
    // EVP_PKEY through separate contexts; the pools are behind mutexes. A TPM key's operations
    // all run on its session's worker, one at a time.
    let pointer: OpaquePointer
    let isPrivate: Bool
    /// The TPM session of a key whose private half is held by a TPM (through the tpm2 provider);
    /// nil for a software key.
    let session: TPMSession?
    private let signContexts = ContextPool(release: { EVP_PKEY_CTX_free($0) })
    private let verifyContexts = ContextPool(release: { EVP_PKEY_CTX_free($0) })
    /// ECDH slots: kept derive contexts (dss_ecdh_slot_new).
    private let deriveSlots = ContextPool(release: { dss_ecdh_slot_free($0) })

    /// Takes ownership of `pointer` (freed in deinit). Refuses anything that is not P-256.
    convenience init(takingOwnershipOf pointer: OpaquePointer) throws {
        try self.init(adopting: pointer, session: nil)
    }

    /// Takes ownership of a key that the tpm2 provider of `session` made or loaded (call on the
    /// session's worker). It holds no private scalar in memory; it is freed on the worker.
    convenience init(takingOwnershipOf pointer: OpaquePointer, in session: TPMSession) throws {
        try self.init(adopting: pointer, session: session)
    }

    private init(adopting pointer: OpaquePointer, session: TPMSession?) throws {
        guard dss_p256_is_p256(pointer) == 1 else {
            let isEC = EVP_PKEY_is_a(pointer, "EC") == 1
            // The tpm2 provider asks the TPM for a key's curve: a TPM that stopped answering is
            // that, not a key on another curve (which would never be loaded again).
            let tpmFailure = session.map {
                TPMFailure.error("read the key's curve", target: $0.target, withLoadedKey: true)
            }
            EVP_PKEY_free(pointer)
            OpenSSLErrorQueue.clear()
            if let tpmFailure, tpmFailure.code == .tpmUnavailable { throw tpmFailure }
            throw isEC
                ? DeviceSigningError(
                    .unsupportedCurve,
                    "The key is an EC key on a curve other than P-256; only P-256 (prime256v1) is supported.")
                : DeviceSigningError(
                    .unsupportedKeyType, "The key is not an EC key; only ECDSA P-256 keys are supported.")
        }
        self.pointer = pointer
        self.session = session
        self.isPrivate = session != nil ? dss_tpm_is_tpm_key(pointer) == 1 : dss_p256_has_private(pointer) == 1
        OpenSSLErrorQueue.clear()
    }

    deinit {
        guard let session else {
            signContexts.freeAll()
            verifyContexts.freeAll()
            deriveSlots.freeAll()
            EVP_PKEY_free(pointer)
            return
        }
        // Freeing a TPM key flushes it from the TPM: a TPM command, so it runs on the worker and
        // is waited for (an exiting process leaves nothing loaded), unless a job that stopped
        // answering holds the worker (``TPMWorker/release(_:)``).
        let owned = OwnedTPMKey(pointer: pointer, pools: [signContexts, verifyContexts, deriveSlots])
        session.worker.release {
            owned.free()
            withExtendedLifetime(session) {}
        }
    }

    /// The key's library context: nil (OpenSSL's default) for software keys.
    var libraryContext: OpaquePointer? { session?.libraryContext }

    /// Signs a 32-byte SHA-256 digest, writing the 64-byte r||s into `raw`.
    func signDigest(_ digest: UnsafeRawBufferPointer, into raw: UnsafeMutableRawBufferPointer) throws {
        guard let session else {
            guard signDigestHere(digest, into: raw) else {
                throw OpenSSLErrorQueue.error(.openSSLFailure, "ECDSA signing failed.")
            }
            return
        }
        // The worker may outlive this call (a TPM that stops answering): it gets copies.
        let input = Array(digest)
        let count = raw.count
        let signature = try session.worker.perform("sign") { [self] in
            var output = [UInt8](repeating: 0, count: count)
            let ok = input.withUnsafeBytes { digest in
                output.withUnsafeMutableBytes { signDigestHere(digest, into: $0) }
            }
            guard ok else { throw TPMFailure.error("sign", target: session.target, withLoadedKey: true) }
            return output
        }
        signature.withUnsafeBytes { raw.copyMemory(from: $0) }
    }

    /// The one signing path of software and TPM keys: a kept context from the key's own library
    /// context. False on failure (error queue set).
    private func signDigestHere(_ digest: UnsafeRawBufferPointer, into raw: UnsafeMutableRawBufferPointer) -> Bool {
        let signed = signContexts.with(create: { dss_sign_context(pointer, libraryContext) }) { context in
            dss_sign_digest_raw(
                context, digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count,
                raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count) == 1
        }
        return signed == true
    }

    /// Verifies a 64-byte r||s over a 32-byte digest. Any failure is `false`.
    func verifyDigest(_ digest: UnsafeRawBufferPointer, raw: UnsafeRawBufferPointer) -> Bool {
        let result = verifyContexts.with(create: { dss_verify_context(pointer, libraryContext) }) { context in
            dss_verify_digest_raw(
                context, digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count,
                raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count)
        }
        if result != 1 { OpenSSLErrorQueue.clear() }
        return result == 1
    }

    /// ECDH of this software key with the public key `peer` (an `EVPKey`'s or a `PeerPublicKey`'s,
    /// validated when it was decoded) into `secret` (32 bytes), through a kept derive slot. False
    /// on failure, `secret` then zeroed.
    func deriveP256(withPeer peer: OpaquePointer, into secret: UnsafeMutableRawBufferPointer) -> Bool {
        let derived = deriveSlots.with(create: { dss_ecdh_slot_new(pointer) }) { slot in
            dss_ecdh_p256_derive(slot, peer, secret.baseAddress?.assumingMemoryBound(to: UInt8.self), secret.count) == 1
        }
        return derived == true
    }

    /// Throws `.keyNotExportable` for a key whose private half never leaves its TPM.
    func requireExportable() throws {
        guard session == nil else { throw Self.notExportable }
    }

    static let notExportable = DeviceSigningError(
        .keyNotExportable,
        "The private key is held by a TPM 2.0 and never leaves it, "
            + "so it cannot be exported; only its public key can. To use this identity elsewhere, generate and "
            + "register a new key there.")

    /// A TPM key and its contexts on their way to being freed on the worker. @unchecked: handed
    /// from the key's deinit to the worker, and used by that one job only.
    private struct OwnedTPMKey: @unchecked Sendable {
        let pointer: OpaquePointer
        let pools: [ContextPool]

        func free() {
            for pool in pools { pool.freeAll() }
            EVP_PKEY_free(pointer)
            OpenSSLErrorQueue.clear()
        }
    }

    /// Lends initialised contexts; a context is used by one operation at a time.
    private final class ContextPool: @unchecked Sendable {
        // @unchecked: the pointers are only touched under `contexts`' lock or by the one borrower.
        private let contexts = Locked<[Handle]>([])
        private static let capacity = 16
        /// Frees one context (EVP_PKEY_CTX_free, or the shim's free of what it made).
        private let release: @Sendable (OpaquePointer) -> Void

        init(release: @escaping @Sendable (OpaquePointer) -> Void) {
            self.release = release
        }

        /// An idle context. @unchecked: a handle is in the pool or with exactly one borrower.
        private struct Handle: @unchecked Sendable {
            let context: OpaquePointer
        }

        /// `body`'s result with a pooled or new context; nil when no context could be created.
        func with<R>(create: () -> OpaquePointer?, _ body: (OpaquePointer) -> R) -> R? {
            let borrowed = contexts.withLock { $0.popLast()?.context }
            guard let context = borrowed ?? create() else { return nil }
            let result = body(context)
            let kept = contexts.withLock { pool -> Bool in
                guard pool.count < Self.capacity else { return false }
                pool.append(Handle(context: context))
                return true
            }
            if !kept { release(context) }
            return result
        }

        func freeAll() {
            let all = contexts.withLock { pool -> [Handle] in
                defer { pool.removeAll() }
                return pool
            }
            for handle in all { release(handle.context) }
        }
    }
}

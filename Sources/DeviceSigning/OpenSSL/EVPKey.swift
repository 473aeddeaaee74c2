import CDeviceSigningShim
import COpenSSL

/// An owned OpenSSL `EVP_PKEY` holding a P-256 key, plus kept signing/verifying contexts.
///
/// The key is parsed once; every signature reuses it. OpenSSL 3.0 spends a noticeable share of
/// a signature's time creating and initialising an `EVP_PKEY_CTX` (provider fetches under locks),
/// so initialised contexts are kept in small pools and lent to one operation at a time.
final class EVPKey: @unchecked Sendable {
    // @unchecked: `pointer` is immutable after init and OpenSSL allows concurrent use of one
    // EVP_PKEY through separate contexts; the pools are behind mutexes.
    let pointer: OpaquePointer
    let isPrivate: Bool
    private let signContexts = ContextPool()
    private let verifyContexts = ContextPool()

    /// Takes ownership of `pointer` (freed in deinit). Refuses anything that is not P-256.
    init(takingOwnershipOf pointer: OpaquePointer) throws {
        guard dss_p256_is_p256(pointer) == 1 else {
            let isEC = EVP_PKEY_is_a(pointer, "EC") == 1
            EVP_PKEY_free(pointer)
            OpenSSLErrorQueue.clear()
            throw isEC
                ? DeviceSigningError(.unsupportedCurve, "The key is an EC key on a curve other than P-256; only P-256 (prime256v1) is supported.")
                : DeviceSigningError(.unsupportedKeyType, "The key is not an EC key; only ECDSA P-256 keys are supported.")
        }
        self.pointer = pointer
        self.isPrivate = dss_p256_has_private(pointer) == 1
        OpenSSLErrorQueue.clear()
    }

    deinit {
        signContexts.freeAll()
        verifyContexts.freeAll()
        EVP_PKEY_free(pointer)
    }

    /// Signs a 32-byte SHA-256 digest, writing the 64-byte r||s into `raw`.
    func signDigest(_ digest: UnsafeRawBufferPointer, into raw: UnsafeMutableRawBufferPointer) throws {
        let ok: Bool = try signContexts.with(create: { dss_sign_context(pointer) }) { context in
            dss_sign_digest_raw(context, digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count,
                                raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count) == 1
        }
        guard ok else { throw OpenSSLErrorQueue.error(.openSSLFailure, "ECDSA signing failed.") }
    }

    /// Verifies a 64-byte r||s over a 32-byte digest. Any failure is `false`.
    func verifyDigest(_ digest: UnsafeRawBufferPointer, raw: UnsafeRawBufferPointer) -> Bool {
        let result = try? verifyContexts.with(create: { dss_verify_context(pointer) }) { context in
            dss_verify_digest_raw(context, digest.baseAddress?.assumingMemoryBound(to: UInt8.self), digest.count,
                                  raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count)
        }
        if result != 1 { OpenSSLErrorQueue.clear() }
        return result == 1
    }

    /// Lends initialised contexts; a context is used by one operation at a time.
    private final class ContextPool: @unchecked Sendable {
        // @unchecked: the pointers are only touched under `contexts`' lock or by the one borrower.
        private let contexts = Locked<[Handle]>([])
        private static let capacity = 16

        /// An idle context. @unchecked: a handle is in the pool or with exactly one borrower.
        private struct Handle: @unchecked Sendable {
            let context: OpaquePointer
        }

        func with<R>(create: () -> OpaquePointer?, _ body: (OpaquePointer) -> R) throws -> R {
            let borrowed = contexts.withLock { $0.popLast()?.context }
            guard let context = borrowed ?? create() else {
                throw OpenSSLErrorQueue.error(.openSSLFailure, "Could not create an OpenSSL signing context.")
            }
            let result = body(context)
            let kept = contexts.withLock { pool -> Bool in
                guard pool.count < Self.capacity else { return false }
                pool.append(Handle(context: context))
                return true
            }
            if !kept { EVP_PKEY_CTX_free(context) }
            return result
        }

        func freeAll() {
            let all = contexts.withLock { pool -> [Handle] in
                defer { pool.removeAll() }
                return pool
            }
            for handle in all { EVP_PKEY_CTX_free(handle.context) }
        }
    }
}

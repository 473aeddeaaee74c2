internal import CDeviceSigningShim
internal import COpenSSL

/// A peer's P-256 public key used for one key agreement: a JWE's `epk`, decoded from its
/// uncompressed point when the header is parsed. Decoding is the check (coordinates below p, on
/// the curve, never infinity: `dss_p256_peer_key_set_point`), so a bad point is refused before any
/// derive, and the derive uses the decoded key: the point is decoded once per JWE.
///
/// The key objects are reused through a small process-wide pool: building one per JWE (a
/// duplicate of the P-256 parameters) costs about a tenth of a derive.
final class PeerPublicKey: @unchecked Sendable, Hashable {
    // @unchecked: `pointer` gets its point in init, before the object is shared, and is only read
    // after (OpenSSL allows concurrent derives with one EVP_PKEY); the pool is behind a lock.
    let pointer: OpaquePointer
    /// The uncompressed point (0x04 || x || y) the key was decoded from.
    let point: [UInt8]

    /// Decodes and checks `point`; throws `.invalidKey` as `P256Backend.publicKey(point:)` does.
    init(point: [UInt8]) throws {
        guard point.count == P256Backend.pointBytes else {
            let bytes = P256Backend.pointBytes
            throw DeviceSigningError(
                .invalidKey, "A P-256 public point is \(bytes) bytes uncompressed; got \(point.count).")
        }
        var decoded = Self.pool.withLock({ $0.popLast()?.pointer }) ?? dss_p256_peer_key_new()
        guard decoded != nil else {
            throw OpenSSLErrorQueue.error(.openSSLFailure, "Could not allocate a P-256 public key.")
        }
        // A refused point may stay in the key: the shim frees it then, and leaves nil.
        let valid = point.withUnsafeBufferPointer {
            dss_p256_peer_key_set_point(&decoded, $0.baseAddress, $0.count) == 1
        }
        guard valid, let key = decoded else {
            OpenSSLErrorQueue.clear()
            throw P256Backend.invalidPoint
        }
        self.pointer = key
        self.point = point
    }

    deinit {
        let handle = Handle(pointer: pointer)
        let kept = Self.pool.withLock { pool -> Bool in
            guard pool.count < Self.capacity else { return false }
            pool.append(handle)
            return true
        }
        if !kept { EVP_PKEY_free(pointer) }
    }

    static func == (lhs: PeerPublicKey, rhs: PeerPublicKey) -> Bool { lhs.point == rhs.point }

    func hash(into hasher: inout Hasher) { hasher.combine(point) }

    /// An idle key. @unchecked: a key is in the pool or with exactly one `PeerPublicKey`.
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private static let capacity = 16
    private static let pool = Locked<[Handle]>([])
}

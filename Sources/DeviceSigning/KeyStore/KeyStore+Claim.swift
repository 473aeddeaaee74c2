import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension KeyStore {
    /// Claims `keyId` for an operation that changes its registration on a backend (register,
    /// rotate), from before the first request until the last write. Two such runs at once would
    /// both change the backend, and the store could then record only one of the outcomes (two
    /// keys recording one dispatch target, or a dispatch target nobody records).
    ///
    /// Not waited for: throws `.keyInUse` at once while another claim on the key is held, in this
    /// process or another (an `flock` on `<keyId>.lock` in the store; the file stays until the key
    /// is deleted). The claim is released by `release()`, or when the returned object goes.
    public func claim(_ keyId: String) throws -> KeyClaim {
        try Self.checkKeyId(keyId)
        guard let descriptor = try storage.lockFile(Self.claimFile(keyId)) else {
            throw DeviceSigningError(
                .keyInUse,
                "Key \(keyId) is in use: another register or rotate of it is under way (in this or another "
                    + "process). Let it finish, then try again.")
        }
        return KeyClaim(keyId: keyId, storePath: directory.path, descriptor: descriptor)
    }

    /// Runs `body` holding the claim on `keyId`: `held` when the caller holds it already (it must
    /// be for `keyId` in this store's directory: the same key id in another store is another
    /// key), otherwise one taken for the call (`.keyInUse` when another holds it).
    func withClaim<R>(on keyId: String, held: KeyClaim?, _ body: () throws -> R) throws -> R {
        if let held {
            guard held.keyId == keyId, held.storePath == directory.path, held.isHeld else {
                throw DeviceSigningError(.keyInUse, "The claim given is not a held claim on key \(keyId).")
            }
            return try body()
        }
        let claim = try claim(keyId)
        defer { claim.release() }
        return try body()
    }

    static func claimFile(_ keyId: String) -> String { keyId + ".lock" }
}

/// A held claim on one key of a `KeyStore` (``KeyStore/claim(_:)``).
public final class KeyClaim: Sendable {
    /// The key claimed.
    public let keyId: String
    /// The directory of the store it was claimed in.
    let storePath: String
    private let descriptor: Locked<Int32?>

    init(keyId: String, storePath: String, descriptor: Int32) {
        self.keyId = keyId
        self.storePath = storePath
        self.descriptor = Locked(descriptor)
    }

    /// Whether the claim is still held (not released).
    public var isHeld: Bool { descriptor.withLock { $0 != nil } }

    deinit { release() }

    /// Releases the claim (once; later calls do nothing).
    public func release() {
        let held = descriptor.withLock { fd in
            defer { fd = nil }
            return fd
        }
        guard let held else { return }
        // Unlocked first: a child that another thread is spawning holds a copy of the descriptor
        // until its exec, and closing ours alone would leave the lock held meanwhile.
        flock(held, LOCK_UN)
        close(held)
    }
}

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
    /// process or another (an `flock` on `<keyId>.lock` in the store; the file stays). The claim
    /// is released by `release()`, or when the returned object goes.
    public func claim(_ keyId: String) throws -> KeyClaim {
        try Self.checkKeyId(keyId)
        guard let descriptor = try storage.lockFile(Self.claimFile(keyId)) else {
            throw DeviceSigningError(
                .keyInUse,
                "Key \(keyId) is in use: another register or rotate of it is under way (in this or another "
                    + "process). Let it finish, then try again.")
        }
        return KeyClaim(descriptor: descriptor)
    }

    static func claimFile(_ keyId: String) -> String { keyId + ".lock" }
}

/// A held claim on one key of a `KeyStore` (``KeyStore/claim(_:)``).
public final class KeyClaim: Sendable {
    private let descriptor: Locked<Int32?>

    init(descriptor: Int32) {
        self.descriptor = Locked(descriptor)
    }

    deinit { release() }

    /// Releases the claim (once; later calls do nothing).
    public func release() {
        let held = descriptor.withLock { fd in
            defer { fd = nil }
            return fd
        }
        if let held { close(held) }
    }
}

import DeviceSigning
import Foundation
import Synchronization

/// Where a registration's signing key comes from: a key already loaded, or a loader run at the
/// first fetch that needs it (typically ``keyStore(_:keyId:passphrase:)``).
///
/// A loader that fails makes that registration's fetch fail with `deviceProtectionError` and is
/// tried again at the next fetch; other registrations are unaffected. After the first success the
/// key is kept and the loader (with any passphrase it captured) is released. Concurrent fetches
/// share one load.
public final class SigningKeySource: Sendable, CustomStringConvertible {
    private enum State {
        case loaded(P256.Signing.PrivateKey)
        case pending(@Sendable () throws -> P256.Signing.PrivateKey)
    }

    private let state: Locked<State>
    /// Set once the key is loaded: read without the lock, which a load holds while it runs.
    private let loaded: Atomic<Bool>
    /// For descriptions and error texts: never secret.
    private let label: String

    /// A key already in memory.
    public init(_ key: P256.Signing.PrivateKey) {
        state = Locked(.loaded(key))
        loaded = Atomic(true)
        label = "key \(key.publicKey.jwkThumbprint)"
    }

    /// A key loaded by `load` when first needed; `label` names it in errors (no secrets).
    public init(label: String, load: @escaping @Sendable () throws -> P256.Signing.PrivateKey) {
        state = Locked(.pending(load))
        loaded = Atomic(false)
        self.label = label
    }

    /// The key `keyId` of `store`, opened with `passphrase` when first needed; a TPM-bound key in
    /// the TPM of `tpm` (pass the configuration its encryption key is loaded with, so that both
    /// use one connection). Its failures (missing, corrupt, unsafe permissions, wrong or missing
    /// passphrase, TPM) become `deviceProtectionError`.
    public static func keyStore(
        _ store: KeyStore, keyId: String, passphrase: SecureBytes?, tpm: TPMConfiguration = .environment
    ) -> SigningKeySource {
        SigningKeySource(label: "key \(keyId) in \(store.directory.path)") {
            try store.load(keyId, passphrase: passphrase, tpm: tpm)
        }
    }

    /// The key, loading it now if needed; rethrows the loader's error.
    public func key() throws -> P256.Signing.PrivateKey {
        try state.withLock { state throws -> P256.Signing.PrivateKey in
            switch state {
            case .loaded(let key):
                return key
            case .pending(let load):
                let key = try load()
                state = .loaded(key)
                loaded.store(true, ordering: .releasing)
                return key
            }
        }
    }

    /// Whether the key has been loaded. Never waits, not even for a load under way.
    public var isLoaded: Bool { loaded.load(ordering: .acquiring) }

    public var description: String { "SigningKeySource(\(label))" }
}

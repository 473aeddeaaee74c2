import Foundation

/// A key held by a TPM, as a `P256.Signing.PrivateKey` keeps it: the key loaded on one connection
/// (a `TPMSession`), and its `TSS2 PRIVATE KEY` file, to load it again on another.
///
/// A connection that failed or stopped answering is never used again (``TPMWorker``). A key that
/// stayed bound to it would fail every later operation with `.tpmUnavailable` until its process
/// restarted, which a long-running client never does. So the first operation after such a failure
/// opens a new connection and loads the key file there, once for all the threads that need it (the
/// file holds the public area, so it is the same key). The operation that met the failure still
/// fails: nothing is retried behind a caller's back.
final class TPMKeyHandle: Sendable {
    let configuration: TPMConfiguration
    /// The `TSS2 PRIVATE KEY` PEM text: the key blob the TPM wrapped under its own storage key.
    /// Useless without that TPM, but held like any key file (zeroed when released).
    let keyFile: SecureBytes
    /// The key on a working connection, or the one that met the failure until the reload; nil
    /// during and after a reload that did not finish.
    private let current: Locked<EVPKey?>
    /// One reload at a time: the threads that find the connection failed meanwhile wait for it and
    /// then use its key. Each reload is bounded by the configuration's timeout (twice: connecting,
    /// then loading).
    private let reloads = NSLock()

    /// `loaded` (a key of a `TPMSession` of `configuration`) and the key file it was read from or
    /// written as.
    init(configuration: TPMConfiguration, keyFile: SecureBytes, loaded: EVPKey) {
        self.configuration = configuration
        self.keyFile = keyFile
        current = Locked(loaded)
    }

    /// The key as loaded now, whatever its connection's state; nil while a reload is under way or
    /// after one failed.
    var loaded: EVPKey? { current.withLock { $0 } }

    /// The key for a TPM operation: the loaded one while its connection works; after a failure,
    /// the key loaded again on a new connection.
    func usable() throws -> EVPKey {
        if let key = working() { return key }
        reloads.lock()
        defer { reloads.unlock() }
        if let key = working() { return key }
        // The failed key goes first, outside the lock: its release may wait for the worker, and a
        // TPM without a resource manager (swtpm) serves the next connection only once its session
        // closes.
        do {
            let failed = current.withLock { key in
                defer { key = nil }
                return key
            }
            _ = failed
        }
        let fresh = try TPMSession.open(configuration).loadKey(keyFile: keyFile)
        current.withLock { $0 = fresh }
        return fresh
    }

    /// The loaded key, unless its connection failed.
    private func working() -> EVPKey? {
        current.withLock { key in key?.session?.worker.hasFailed == false ? key : nil }
    }
}

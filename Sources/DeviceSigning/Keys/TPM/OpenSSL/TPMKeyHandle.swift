import Foundation

/// A key held by a TPM, as a `P256.Signing.PrivateKey` keeps it: the key loaded on one connection
/// (a `TPMSession`), and its `TSS2 PRIVATE KEY` file, to load it again on another.
///
/// A connection that failed or stopped answering is never used again (``TPMWorker``). A key that
/// stayed bound to it would fail every later operation with `.tpmUnavailable` until its process
/// restarted, which a long-running client never does. So the first operation after such a failure
/// opens a new connection and loads the key file there (the file holds the public area, so it is
/// the same key). The operation that met the failure still fails: nothing is retried behind a
/// caller's back.
///
/// One reload at a time: the threads that wait meanwhile take its key, or its error if it failed,
/// and none waits longer than the configuration's timeout for its turn. Before connecting, every
/// key on the failed connection is dropped (``TPMSession/dropKeys()``), this handle's and the
/// other keys of that session (a registration's signing and encryption keys share one): a TPM
/// without a resource manager (swtpm, `/dev/tpm0`) serves a new connection only once the old one
/// is closed.
final class TPMKeyHandle: Sendable {
    let configuration: TPMConfiguration
    /// The `TSS2 PRIVATE KEY` PEM text: the key blob the TPM wrapped under its own storage key.
    /// Useless without that TPM, but held like any key file (zeroed when released).
    let keyFile: SecureBytes
    /// The loaded key; nil once dropped for a reload, until one succeeds.
    private let current: Locked<EVPKey?>
    private let reloads = NSLock()
    /// How many reloads have finished, and the last one's error (nil: it worked).
    private let lastReload = Locked<(count: Int, error: DeviceSigningError?)>((0, nil))

    /// `loaded` (a key of a `TPMSession` of `configuration`) and the key file it was read from or
    /// written as.
    init(configuration: TPMConfiguration, keyFile: SecureBytes, loaded: EVPKey) {
        self.configuration = configuration
        self.keyFile = keyFile
        current = Locked(loaded)
        loaded.session?.register(self)
    }

    /// The key as loaded now, whatever its connection's state; nil while a reload is under way or
    /// after one failed.
    var loaded: EVPKey? { current.withLock { $0 } }

    /// The key for a TPM operation: the loaded one while its connection works; after a failure,
    /// the key loaded again on a new connection.
    func usable() throws -> EVPKey {
        if let key = working() { return key }
        let reloadsSeen = lastReload.withLock { $0.count }
        let wait = TPMDeadline.remaining(cappedAt: configuration.timeoutSeconds)
        guard reloads.lock(before: Date(timeIntervalSinceNow: wait)) else {
            throw DeviceSigningError(
                .tpmUnavailable,
                "Could not use the TPM key: another thread has been reconnecting to the TPM through "
                    + "\(configuration.target) for longer than this operation could wait (at most "
                    + "\(configuration.timeout)).")
        }
        defer { reloads.unlock() }
        if let key = working() { return key }
        let (count, error) = lastReload.withLock { $0 }
        if count > reloadsSeen, let error { throw error }
        do {
            let fresh = try reload()
            lastReload.withLock { $0 = ($0.count + 1, nil) }
            return fresh
        } catch {
            let failure =
                error as? DeviceSigningError
                ?? DeviceSigningError(.tpmUnavailable, "Could not reconnect to the TPM: \(error)")
            lastReload.withLock { $0 = ($0.count + 1, failure) }
            throw failure
        }
    }

    /// Drops every key of the failed session (releasing them, outside any lock but `reloads`),
    /// then loads the key file on a new connection.
    private func reload() throws -> EVPKey {
        dropFailedSession()
        let fresh = try TPMSession.open(configuration).loadKey(keyFile: keyFile)
        current.withLock { $0 = fresh }
        fresh.session?.register(self)
        return fresh
    }

    /// In a function of its own, so that no reference to the failed session outlives it: the
    /// session closes its connection when the last one goes.
    ///
    /// The failed session is this key's own, and the configuration's failed session on record:
    /// a key with no loaded key (another key's reload dropped it, or its own reload failed) still
    /// finds the connection that the other keys hold, which a TPM serving one connection at a
    /// time would otherwise keep from the new one.
    private func dropFailedSession() {
        var failed: [TPMSession] = []
        if let own = current.withLock({ $0?.session }) { failed.append(own) }
        if let recorded = TPMSession.failed(configuration), !failed.contains(where: { $0 === recorded }) {
            failed.append(recorded)
        }
        for session in failed {
            session.dropKeys()
            session.worker.settle()
        }
    }

    /// Takes the loaded key out when it is on `session`; the caller releases it outside this lock.
    func take(on session: TPMSession) -> EVPKey? {
        current.withLock { key in
            guard let loaded = key, loaded.session === session else { return nil }
            key = nil
            return loaded
        }
    }

    /// The loaded key, unless its connection failed.
    private func working() -> EVPKey? {
        current.withLock { key in key?.session?.worker.hasFailed == false ? key : nil }
    }
}

internal import CDeviceSigningShim
import Foundation

/// OpenSSL's tpm2 provider loaded beside `default` in a library context of its own and connected
/// to one TPM, the keys made or read there, and the worker that runs their operations.
///
/// Opened only when a TPM key is generated or loaded: software keys never load the provider. Open
/// sessions are shared per configuration while some key uses them; a session whose connection
/// failed is not reused, so loading a key again reconnects.
final class TPMSession: @unchecked Sendable {
    // @unchecked: `library` is immutable after init, and every OpenSSL call on it or on its keys
    // runs on `worker`'s queue (the deinit runs when no key and no queued job holds the session).
    let configuration: TPMConfiguration
    let worker: TPMWorker
    private let library: OpaquePointer

    /// tpm2-openssl 1.1.1 takes its TCTI only from the environment, which `dss_tpm_library_open`
    /// sets around the load: loads are serialized process-wide.
    private static let providerLoads = NSLock()
    /// One open at a time, so that callers that need a connection at once (a signing key and an
    /// encryption key that both found theirs failed) share the one the first opens. A TPM without
    /// a resource manager serves one connection at a time: a second would wait for the first.
    private static let opens = NSLock()
    private static let sessions = Locked<[TPMConfiguration: WeakSession]>([:])

    /// The handles of the keys loaded here, for ``dropKeys()``.
    private let handles = Locked<[WeakHandle]>([])

    private struct WeakSession {
        weak var session: TPMSession?
    }

    private struct WeakHandle {
        weak var handle: TPMKeyHandle?
    }

    private init(configuration: TPMConfiguration, worker: TPMWorker, adopting library: OpaquePointer) {
        self.configuration = configuration
        self.worker = worker
        self.library = library
    }

    deinit {
        // A failed unload leaves nothing to do here: freeing the library context releases the
        // rest, and a deinit has no caller to tell. The queue is cleared either way.
        _ = dss_tpm_library_close(library)
        OpenSSLErrorQueue.clear()
    }

    /// The library context that holds the provider and its keys.
    var libraryContext: OpaquePointer? { dss_tpm_library_context(library) }

    /// Which TPM, in words for error messages.
    var target: String { worker.target }

    /// A session for `configuration`: a working one already open, or a new connection.
    static func open(_ configuration: TPMConfiguration) throws -> TPMSession {
        try configuration.validate()
        if let session = working(configuration) { return session }
        let deadline = Date(timeIntervalSinceNow: TPMDeadline.remaining(cappedAt: configuration.timeoutSeconds))
        guard opens.lock(before: deadline) else {
            throw stillStarting(configuration.target)
        }
        defer { opens.unlock() }
        if let session = working(configuration) { return session }
        let worker = TPMWorker(configuration: configuration)
        let session = try worker.perform("connect to the TPM") { () throws -> TPMSession in
            guard providerLoads.lock(before: deadline) else {
                throw stillStarting(worker.target)
            }
            defer { providerLoads.unlock() }
            // The TCTI that will be loaded, read under the lock that every change of the
            // variable by a load holds, and checked as it is passed on.
            let tcti =
                configuration.tcti ?? dss_tpm_environment_tcti().map { String(cString: $0) }
                ?? TPMConfiguration.defaultTCTI
            try TPMConfiguration.checkModule(of: tcti, target: worker.target)
            let opened = tcti.withCString { dss_tpm_library_open($0) }
            guard let library = opened else { throw TPMFailure.connectError(target: worker.target) }
            return TPMSession(configuration: configuration, worker: worker, adopting: library)
        }
        sessions.withLock { all in
            all = all.filter { $0.value.session != nil }
            all[configuration] = WeakSession(session: session)
        }
        return session
    }

    /// The open session of `configuration`, unless its connection failed.
    private static func working(_ configuration: TPMConfiguration) -> TPMSession? {
        sessions.withLock { $0[configuration]?.session }.flatMap { $0.worker.hasFailed ? nil : $0 }
    }

    /// The last session opened for `configuration`, if it is still open and its connection failed.
    static func failed(_ configuration: TPMConfiguration) -> TPMSession? {
        sessions.withLock { $0[configuration]?.session }.flatMap { $0.worker.hasFailed ? $0 : nil }
    }

    /// Records a handle whose key was loaded in this session.
    func register(_ handle: TPMKeyHandle) {
        handles.withLock { all in
            all.removeAll { $0.handle == nil }
            all.append(WeakHandle(handle: handle))
        }
    }

    /// Takes the loaded key out of every handle whose key is in this session, and releases them
    /// (each release waits for the worker, within its timeout, unless a job is stuck there): once
    /// nothing else holds the session, its connection closes.
    func dropKeys() {
        let live = handles.withLock { $0.compactMap(\.handle) }
        var dropped = live.compactMap { $0.take(on: self) }
        dropped.removeAll()
    }

    /// The refusal when an earlier connection of this process does not finish starting.
    private static func stillStarting(_ target: String) -> DeviceSigningError {
        DeviceSigningError(
            .tpmUnavailable,
            "Could not connect to the TPM through \(target): "
                + "another TPM connection of this process is still starting (its TPM does not answer).")
    }

    /// A new P-256 key pair generated in the TPM, with its key file (to load it again).
    func generateKey() throws -> P256.Signing.PrivateKey {
        try worker.perform("generate a P-256 key") { [self] in
            guard let pointer = dss_tpm_generate_p256(library) else {
                throw TPMFailure.error("generate a P-256 key", target: target)
            }
            let key = try EVPKey(takingOwnershipOf: pointer, in: self)
            var output: UnsafeMutablePointer<UInt8>?
            var length = 0
            guard dss_tpm_key_pem(key.pointer, &output, &length) == 1, let output else {
                throw TPMFailure.error("write the key file", target: target)
            }
            defer { dss_free_clear(output, length) }
            let keyFile = SecureBytes(UnsafeBufferPointer(start: output, count: length))
            return try P256.Signing.PrivateKey(
                tpm: TPMKeyHandle(configuration: configuration, keyFile: keyFile, loaded: key), loaded: key)
        }
    }

    /// The key of a `TSS2 PRIVATE KEY` PEM (text checked by the caller), loaded into the TPM.
    func key(fromKeyFile keyFile: SecureBytes) throws -> P256.Signing.PrivateKey {
        try worker.perform("load the key") { [self] in
            let key = try loadHere(keyFile)
            return try P256.Signing.PrivateKey(
                tpm: TPMKeyHandle(configuration: configuration, keyFile: keyFile, loaded: key), loaded: key)
        }
    }

    /// The same key loaded again (``TPMKeyHandle``).
    func loadKey(keyFile: SecureBytes) throws -> EVPKey {
        try worker.perform("load the key") { [self] in try loadHere(keyFile) }
    }

    /// Loads `keyFile` on the worker.
    private func loadHere(_ keyFile: SecureBytes) throws -> EVPKey {
        var status: Int32 = DSS_TPM_LOAD_FAILED
        let loaded = keyFile.withUnsafeBytes { text in
            dss_tpm_load_pem(library, text.baseAddress?.assumingMemoryBound(to: UInt8.self), text.count, &status)
        }
        guard let pointer = loaded else {
            if status == DSS_TPM_LOAD_NOT_TPM {
                OpenSSLErrorQueue.clear()
                throw DeviceSigningError(.malformedEncoding, "The key file does not hold a TPM key.")
            }
            let error = TPMFailure.error("load the key", target: target, loadingKey: true)
            guard error.code != .openSSLFailure else {
                throw DeviceSigningError(
                    .malformedEncoding,
                    "The TSS2 PRIVATE KEY is not one the tpm2 provider "
                        + "can read (truncated or garbled).", openSSLErrors: error.openSSLErrors)
            }
            throw error
        }
        return try EVPKey(takingOwnershipOf: pointer, in: self)
    }
}

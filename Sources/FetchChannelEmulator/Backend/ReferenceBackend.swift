import DeviceSigning
import FetchChannelWire
import Foundation

/// The reference backend: an emulator of the backend's device endpoints on loopback, for tests,
/// the demo and development. It speaks the same HTTP, verifies the same Device-Signatures and
/// fails in the same ways as docs/ARCHITECTURE.md ("Wire contract") describes; `/_emulator/…` controls it.
///
/// Starting one takes one line: `let backend = try ReferenceBackend.start()`; stop it with `stop()`.
/// All state is in memory, behind one lock; time comes from the configured clock plus an
/// adjustable offset, so tests control skew and expiry without sleeping.
public final class ReferenceBackend: Sendable {
    public struct Configuration: Sendable {
        /// 127.0.0.1 or ::1 (the server refuses other hosts).
        public var host: String
        /// 0 picks an ephemeral port.
        public var port: Int
        /// Allowed |device time − server time| for a Device-Signature.
        public var toleranceMillis: Int64
        /// The clock the server offset is added to.
        public var clock: any WallClock
        /// The server clock's initial offset (positive: the server is ahead).
        public var clockOffsetMillis: Int64
        /// Request ids remembered for replay detection (each for up to two tolerances).
        public var replayCacheCapacity: Int
        /// Of those, the most one dispatch target may hold; over it, its requests get 429.
        public var replayQuotaPerDispatchTarget: Int
        /// The path prefix of the device endpoints.
        public var basePath: String
        /// Lifetime of an operation dispatched without one.
        public var defaultLifetimeSeconds: Double
        /// The most operations one device may have pending (neither redeemed nor expired); a
        /// dispatch beyond it gets 507 `TOO_MANY_OPERATIONS`, so that one device cannot fill the
        /// store for all (docs/ARCHITECTURE.md, "Wire contract"). At least 1. Fewer may be taken:
        /// their answer must also stay within what the client reads (785,648 bytes of JSON).
        public var pendingOperationsPerDevice: Int
        /// The HTTP server's settings (host, port and clock are taken from the fields above; the
        /// request body limit is at most ``ReferenceBackend/maximumRequestBodyBytes``).
        public var http: HTTPServer.Configuration
        /// The key management algorithm of encrypted operations answers (`Accept: application/jose`).
        public var jweAlgorithm: JWE.Algorithm
        /// The content encryption of encrypted operations answers.
        public var jweEncryption: JWE.ContentEncryption

        public init(
            host: String = "127.0.0.1", port: Int = 0, toleranceMillis: Int64 = 60_000,
            clock: any WallClock = SystemWallClock(), clockOffsetMillis: Int64 = 0,
            replayCacheCapacity: Int = 1_000_000,
            replayQuotaPerDispatchTarget: Int = DeviceSignatureVerifier.defaultReplayQuotaPerDispatchTarget,
            basePath: String = WirePaths.basePath,
            defaultLifetimeSeconds: Double = 300, pendingOperationsPerDevice: Int = 1_000,
            http: HTTPServer.Configuration = HTTPServer.Configuration(),
            jweAlgorithm: JWE.Algorithm = .ecdhES, jweEncryption: JWE.ContentEncryption = .a256GCM
        ) {
            self.host = host
            self.port = port
            self.toleranceMillis = toleranceMillis
            self.clock = clock
            self.clockOffsetMillis = clockOffsetMillis
            self.replayCacheCapacity = replayCacheCapacity
            self.replayQuotaPerDispatchTarget = replayQuotaPerDispatchTarget
            self.basePath = basePath
            self.defaultLifetimeSeconds = defaultLifetimeSeconds
            self.pendingOperationsPerDevice = pendingOperationsPerDevice
            self.http = http
            self.jweAlgorithm = jweAlgorithm
            self.jweEncryption = jweEncryption
        }
    }

    /// The certificate a backend started with TLS presents (docs/ARCHITECTURE.md, "Transport and trust").
    public enum TLS: Sendable, Hashable {
        /// A fresh P-256 CA and a leaf for 127.0.0.1, ::1 and localhost, made in memory at start;
        /// clients trust `tlsCertificateAuthorityPEM` or pin `tlsPin`.
        case generated
        /// A PEM certificate chain (leaf first, then intermediates) and its unencrypted PEM P-256 key.
        case files(certificate: String, key: String)
    }

    /// The largest request body the backend reads (64 KiB): its largest body, a registration
    /// with two JWKs and five texts of 256 bytes or a dispatch with 4 KiB of data, takes a few
    /// KiB, and a larger one only costs memory. Over it: 413, before the body is read.
    public static let maximumRequestBodyBytes = 64 * 1024

    public let configuration: Configuration
    /// Where the backend listens, e.g. `http://127.0.0.1:49152` (`https://…` with TLS).
    public let baseURL: URL
    /// The generated CA's certificate (PEM) clients trust; nil without TLS or with `.files`.
    public let tlsCertificateAuthorityPEM: String?
    /// The leaf's SPKI pin, `sha256//BASE64` (as libcurl and RFC 7469 write it); nil without TLS.
    public let tlsPin: String?
    private let server: HTTPServer
    private let router: BackendRouter
    /// Every hold made (``holdNextAnswer(to:)``), held or not yet, and whether the backend stops.
    private let holds = Locked<(all: [AnswerHold], stopped: Bool)>(([], false))

    /// Starts a backend and returns it, listening; over TLS when `tls` is given.
    public static func start(
        _ configuration: Configuration = Configuration(),
        tls: TLS? = nil
    ) throws -> ReferenceBackend {
        try ReferenceBackend(configuration: configuration, tls: tls)
    }

    /// Creates and starts a backend; over TLS when `tls` is given (or `configuration.http.tlsIdentity` is set).
    public init(configuration: Configuration = Configuration(), tls: TLS? = nil) throws {
        self.configuration = configuration
        guard configuration.pendingOperationsPerDevice >= 1 else {
            throw DeviceSigningError(
                .invalidConfiguration,
                "pendingOperationsPerDevice must be at least 1; got \(configuration.pendingOperationsPerDevice).")
        }
        let clock = ServerClock(base: configuration.clock, offsetMillis: configuration.clockOffsetMillis)
        let state = BackendState(pendingCapacityPerDevice: configuration.pendingOperationsPerDevice)
        let verifier = try DeviceSignatureVerifier(
            toleranceMillis: configuration.toleranceMillis, clock: clock,
            replayCacheCapacity: configuration.replayCacheCapacity,
            replayQuotaPerDispatchTarget: configuration.replayQuotaPerDispatchTarget,
            keyLookup: { state.target($0)?.signatureKey })
        let router = BackendRouter(
            configuration: configuration, state: state, clock: clock, verifier: verifier,
            baseURL: Locked(""))
        var http = configuration.http
        http.host = configuration.host
        http.port = configuration.port
        // Loopback only, whatever `http` says: the emulator is never exposed (see `host`).
        http.allowNonLoopback = false
        http.limits.maxBodyBytes = min(http.limits.maxBodyBytes, Self.maximumRequestBodyBytes)
        http.clock = { clock.nowMillis() }
        switch tls {
        case nil: break
        // Valid by the real time, not the backend's clock: clients check it against their own
        // clocks, and a manual or skewed backend clock would make it expired or not yet valid.
        case .generated: http.tlsIdentity = try TLSServerIdentity.generate()
        case .files(let certificate, let key):
            http.tlsIdentity = try TLSServerIdentity.load(certificateFile: certificate, keyFile: key)
        }
        let server = HTTPServer(configuration: http, handler: { router.handle($0) })
        // Known before the first request is accepted: a dispatch must not hand out a redeem URL
        // without the origin.
        let address = try server.start(beforeAccepting: { address in
            router.baseURL.withLock { $0 = address.baseURL.absoluteString }
        })
        self.server = server
        self.router = router
        self.baseURL = address.baseURL
        self.tlsCertificateAuthorityPEM = http.tlsIdentity?.certificateAuthorityPEM
        self.tlsPin = http.tlsIdentity?.pin
    }

    /// Stops listening, closes every connection and joins the server's threads. Idempotent.
    public func stop() {
        releaseHolds()
        server.stop()
    }

    deinit {
        releaseHolds()
        server.stop()
    }

    /// Holds the answer to the next request to `endpoint` (one that no fault applies to) until
    /// the returned hold is released; ``stop()`` releases it too. For tests that need requests to
    /// overlap.
    package func holdNextAnswer(to endpoint: EmulatorEndpoint) -> AnswerHold {
        let hold = AnswerHold(endpoint: endpoint)
        let stopped = holds.withLock { holds -> Bool in
            if !holds.stopped { holds.all.append(hold) }
            return holds.stopped
        }
        // Made while (or after) the backend stops: released already, so nothing can wait on it.
        if stopped { hold.release() } else { router.state.addHold(hold) }
        return hold
    }

    /// Lets every held answer go, and every hold made from now on, so that no server thread
    /// waits for a release that will not come.
    private func releaseHolds() {
        let all = holds.withLock { holds -> [AnswerHold] in
            holds.stopped = true
            return holds.all
        }
        for hold in all { hold.release() }
    }

    // MARK: In-process control (the same code as the `/_emulator/` API)

    /// Registers a dispatch target for `deviceId` with the device's public key (and the key its
    /// operations answers are encrypted to, if any); returns its id. This is the emulator's own
    /// control: unlike the HTTP endpoint it needs no signature for a device that already has a
    /// dispatch target.
    public func registerDispatchTarget(
        deviceId: String, signatureKey: P256.Signing.PublicKey,
        encryptionKey: P256.KeyAgreement.PublicKey? = nil,
        username: String = "user", name: String = "device"
    ) throws -> String {
        let record = DispatchTargetRecord(
            id: UUID().uuidString.lowercased(), extId: UUID().uuidString.lowercased(),
            username: username, deviceId: deviceId, name: name, target: "emulator",
            dispatcher: "emulator", signatureKey: signatureKey,
            encryptionKey: encryptionKey)
        guard router.state.register(record, by: .control) == .registered else {
            let reason = "The emulator holds the most dispatch targets it keeps."
            throw EmulatorError(code: .capacityReached, reason: reason)
        }
        return record.id
    }

    /// The ids of the dispatch targets registered for `deviceId`.
    public func dispatchTargetIds(ofDevice deviceId: String) -> Set<String> {
        router.state.targetIds(ofDevice: deviceId)
    }

    /// Dispatches an operation to `deviceId` through `channel` (a wire name such as
    /// `firebase-cloud-messaging`, `png-qr-code`, `link`, or any other).
    @discardableResult
    public func dispatch(
        deviceId: String, channel: String, lifetimeSeconds: Double? = nil,
        operation: String = "authentication"
    ) throws -> DispatchedOperation {
        var body: [String: Any] = ["deviceId": deviceId, "channel": channel, "operation": operation]
        if let lifetimeSeconds { body["lifetimeSeconds"] = lifetimeSeconds }
        switch router.dispatch(body) {
        case .success(let stored):
            return DispatchedOperation(
                token: stored.token, redeemURL: stored.redeemURL, channel: stored.channel,
                creationTimeInEpochMillis: stored.creationTimeMillis)
        case .failure(let refusal):
            throw EmulatorError(code: .dispatchRefused, reason: refusal.reason)
        }
    }

    /// The server clock's offset from the configured clock (positive: the server is ahead).
    public var clockOffsetMillis: Int64 {
        get { router.clock.offsetMillis }
        set { router.setClockOffset(millis: newValue) }
    }

    /// The server's current time (configured clock plus offset).
    public var serverTimeMillis: Int64 { router.clock.nowMillis() }

    /// Adds `fault` after those injected before (the first matching one applies). Throws
    /// `invalidFault` for parameters its kind cannot use, and `capacityReached` when
    /// 1,000 faults are kept already (``clearFaults()`` empties the list).
    public func injectFault(_ fault: EmulatorFault) throws {
        if let problem = fault.validationProblem() { throw EmulatorError(code: .invalidFault, reason: problem) }
        guard router.state.addFault(fault) else {
            throw EmulatorError(code: .capacityReached, reason: BackendRouter.tooManyFaults)
        }
    }

    public func clearFaults() {
        router.state.clearFaults()
    }

    public var statistics: EmulatorStatistics { router.state.statistics }

    /// The HTTP server's connection counters.
    public var serverStatistics: HTTPServerStatistics { server.statistics }
}

/// An operation the emulator dispatched, as the in-process control returns it.
public struct DispatchedOperation: Sendable, Hashable {
    public let token: String
    public let redeemURL: String
    public let channel: String
    public let creationTimeInEpochMillis: Int64
}

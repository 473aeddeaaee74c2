import DeviceSigning
import FetchChannel
import FetchChannelEmulator
import FetchChannelWire
import Foundation

/// The demo's narrative. Real HTTP on loopback, real signatures, a real key store; the device's
/// clock is the system clock plus simulated time, so "a second later" takes no time.
struct DemoWalkthrough {
    /// The system clock, moved forward on request.
    final class SimulatedDeviceClock: WallClock {
        private let advanced = Locked<Int64>(0)
        func nowMillis() -> Int64 { SystemWallClock().nowMillis() + advanced.withLock { $0 } }
        func advance(byMillis delta: Int64) { advanced.withLock { $0 += delta } }
    }

    /// The operations the healthy backend dispatched in step 4.
    struct Dispatched {
        let push: DispatchedOperation
        let qr: DispatchedOperation
        let link: DispatchedOperation
    }

    let narration: DemoNarration
    let clock = SimulatedDeviceClock()
    let deviceId = "demo-phone"

    func say(_ text: String = "") { narration.say(text) }
    func step(_ number: Int, _ title: String) { narration.step(number, title) }

    func run() async throws {
        // Registered as it is made: a signal that `demo` catches removes it too.
        let (storeDirectory, storeRegistration) = try TerminationCleanup.makeTemporaryDirectory(
            prefix: "fetchchannel-demo-")
        defer { storeRegistration.undo() }

        say("fetchchannel demo: the fetch channel of a device, against reference backends on loopback.")
        let backends = try DemoBackends.start()
        defer { backends.stop() }
        backends.describe(self)
        let (store, keyId, key) = try createKey(in: storeDirectory)
        let registrations = try await register(key, keyId: keyId, in: store, with: backends)
        let dispatched = try dispatchOperations(on: backends)

        // 5. A foreground trigger fetches from every backend at once. Redemption goes only to
        // the backends the device is registered on, whatever a push or QR code names.
        let redeemer = RedemptionClient(registrations: registrations)
        let client = FetchClient(configuration: .init(requestTimeout: .seconds(5)), clock: clock)
        let fetcher = RegisteredFetchClient(client: client, registrations: registrations)
        let (observer, snapshot) = try await fetchOnForeground(fetcher, redeemer: redeemer, healthy: backends.healthy)
        await showThrottling(observer, healthy: backends.healthy)
        showChannelPolicies(snapshot)
        let pipeline = RedemptionPipeline(redeemer: redeemer)
        await showPushDuringFetch(dispatched.push, fetcher: fetcher, pipeline: pipeline, healthy: backends.healthy)
        let retried = try await showReleasedRedemption(
            of: dispatched.qr, in: snapshot, pipeline: pipeline, healthy: backends.healthy)
        try showErrors(of: snapshot, push: dispatched.push, retried: retried, healthy: backends.healthy)
        try await showTPMBoundKey(step: 11, store: store, beside: registrations[0], backend: backends.healthy)
        say()
        say("Done. The temporary key store is removed; the backends stop.")
    }

    /// 2. A key in a temporary, encrypted store.
    private func createKey(in storeDirectory: URL) throws -> (KeyStore, String, P256.Signing.PrivateKey) {
        // Not made again when missing: once a caught signal removed it, it stays removed.
        let store = try KeyStore(directory: storeDirectory, createIfMissing: false)
        let passphrase = SecureBytes(Array("demo passphrase".utf8))
        let generated = try P256.Signing.PrivateKey()
        let keyId = try store.save(
            generated, metadata: KeyMetadata(publicKey: generated.publicKey, deviceId: deviceId),
            passphrase: passphrase)
        let key = try store.load(keyId, passphrase: passphrase)
        step(2, "Created device key \(keyId) in a temporary store (\(KeyDerivation.default), AES-256-CBC, mode 0600).")
        return (store, keyId, key)
    }

    /// 3. Registers the key with the two backends that answer (the down one keeps a made-up id);
    /// returns the device's registrations at all four.
    private func register(
        _ key: P256.Signing.PrivateKey, keyId: String, in store: KeyStore, with backends: DemoBackends
    ) async throws -> [FetchRegistration] {
        let healthy = backends.healthy
        let healthyTarget = try await Self.register(
            key, deviceId: deviceId, at: healthy.baseURL, trust: backends.healthyTrust)
        let skewedTarget = try await Self.register(key, deviceId: deviceId, at: backends.skewed.baseURL)
        try store.updateMetadata(keyId) {
            $0.dispatchTargetId = healthyTarget
            $0.server = healthy.baseURL.absoluteString
        }
        step(3, "Registered the key as a dispatch target: \(healthyTarget) (healthy), \(skewedTarget) (skewed).")
        // The wrong-pin backend registers in process: over the network the pin check refuses it.
        let repinnedTarget = try backends.repinned.registerDispatchTarget(
            deviceId: deviceId, signatureKey: key.publicKey)
        return [
            FetchRegistration(
                server: healthy.baseURL, deviceId: deviceId, dispatchTargetId: healthyTarget, key: key,
                trust: backends.healthyTrust),
            FetchRegistration(
                server: backends.skewed.baseURL, deviceId: deviceId, dispatchTargetId: skewedTarget, key: key),
            FetchRegistration(server: backends.downURL, deviceId: deviceId, dispatchTargetId: "unreachable", key: key),
            FetchRegistration(
                server: backends.repinned.baseURL, deviceId: deviceId, dispatchTargetId: repinnedTarget, key: key,
                trust: backends.repinnedTrust),
        ]
    }

    /// 4. Operations through the three channels.
    private func dispatchOperations(on backends: DemoBackends) throws -> Dispatched {
        let healthy = backends.healthy
        let dispatched = Dispatched(
            push: try healthy.dispatch(deviceId: deviceId, channel: DispatchChannel.pushNotification.wireValue),
            qr: try healthy.dispatch(deviceId: deviceId, channel: DispatchChannel.qrCode.wireValue),
            link: try healthy.dispatch(deviceId: deviceId, channel: DispatchChannel.link.wireValue))
        try backends.skewed.dispatch(deviceId: deviceId, channel: DispatchChannel.pushNotification.wireValue)
        step(
            4,
            "The healthy backend dispatched three operations: push \(Self.short(dispatched.push.token)), "
                + "QR code \(Self.short(dispatched.qr.token)), link \(Self.short(dispatched.link.token)).")
        return dispatched
    }

    /// POSTs the public key to the backend's dispatch-target endpoint; returns the target id.
    static func register(
        _ key: P256.Signing.PrivateKey, deviceId: String, at server: URL,
        trust: TLSTrust = .system
    ) async throws -> String {
        let body = DispatchTargetBody.registration(
            username: "demo", deviceId: deviceId, name: "demo phone", signatureKey: key.publicKey.jwk,
            encryptionKey: nil)
        let answer = try await BackendHTTPClient().send(
            "POST", server.appendingPathComponent(DispatchTargetBody.path), json: body, trust: trust)
        guard answer.status == 201, let id = DispatchTargetBody.targetId(of: answer) else {
            throw CLIFailure(.unexpectedOutcome, "registration failed: \(answer.summary)")
        }
        return id
    }

    /// What a device that got a backend's CA certificate and pin out of band trusts: that CA only, and that key.
    static func trust(of backend: ReferenceBackend) throws -> TLSTrust {
        let authority = try require(backend.tlsCertificateAuthorityPEM, "the backend has no generated CA")
        return try TLSTrust(anchors: .pemBundle(Data(authority.utf8)), pins: [require(backend.tlsPin, "no pin")])
    }

    static func require<T>(_ value: T?, _ message: String) throws -> T {
        guard let value else { throw CLIFailure(.unexpectedOutcome, message) }
        return value
    }

    /// The first characters of a token: enough to tell operations apart on screen.
    static func short(_ token: String) -> String { String(token.prefix(8)) + "…" }

    static func time(_ millis: Int64) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }
}

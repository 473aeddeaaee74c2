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

    let output: OutputChannel

    func say(_ text: String = "") { output.line(text) }
    func step(_ number: Int, _ title: String) {
        say()
        say("\(number). \(title)")
    }

    func run() async throws {
        let clock = SimulatedDeviceClock()
        let storeDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("fetchchannel-demo-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: storeDirectory) }

        say("fetchchannel demo: the fetch channel of a device, against reference backends on loopback.")

        // 1. Four backends. The healthy one speaks HTTPS; the device trusts its generated CA and pins its key.
        let healthy = try ReferenceBackend.start(tls: .generated)
        defer { healthy.stop() }
        let healthyTrust = try Self.trust(of: healthy)
        let skewed = try ReferenceBackend.start(.init(clockOffsetMillis: 7 * 60_000 + 12_000))
        defer { skewed.stop() }
        let down = try ReferenceBackend.start()
        let downURL = down.baseURL
        down.stop()  // nothing listens there any more: connections are refused
        // Its certificate is valid, but its key is not the one the device pinned (the healthy one's).
        let repinned = try ReferenceBackend.start(tls: .generated)
        defer { repinned.stop() }
        let repinnedTrust = try TLSTrust(anchors: try Self.trust(of: repinned).anchors, pins: healthyTrust.pins)
        step(1, "Four reference backends:")
        say("   healthy        \(healthy.baseURL.absoluteString)  (HTTPS: its CA trusted, its key pinned)")
        say("   clock skewed   \(skewed.baseURL.absoluteString)  (its clock is 7 min 12 s ahead)")
        say("   down           \(downURL.absoluteString)")
        say(
            "   wrong pin      \(repinned.baseURL.absoluteString)  "
                + "(HTTPS: its CA trusted, its key is not the pinned one)")

        // 2. A key in a temporary, encrypted store.
        let store = try KeyStore(directory: storeDirectory.appendingPathComponent("keys", isDirectory: true))
        let passphrase = SecureBytes(Array("demo passphrase".utf8))
        let generated = try P256.Signing.PrivateKey()
        let keyId = try store.save(
            generated, metadata: KeyMetadata(publicKey: generated.publicKey, deviceId: "demo-phone"),
            passphrase: passphrase)
        let key = try store.load(keyId, passphrase: passphrase)
        step(2, "Created device key \(keyId) in a temporary store (\(KeyDerivation.default), AES-256-CBC, mode 0600).")

        // 3. Register it with the two backends that answer (the down one keeps a made-up id).
        let deviceId = "demo-phone"
        let healthyTarget = try await Self.register(key, deviceId: deviceId, at: healthy.baseURL, trust: healthyTrust)
        let skewedTarget = try await Self.register(key, deviceId: deviceId, at: skewed.baseURL)
        try store.updateMetadata(keyId) {
            $0.dispatchTargetId = healthyTarget
            $0.server = healthy.baseURL.absoluteString
        }
        step(3, "Registered the key as a dispatch target: \(healthyTarget) (healthy), \(skewedTarget) (skewed).")
        // The wrong-pin backend registers in process: over the network the pin check refuses it.
        let repinnedTarget = try repinned.registerDispatchTarget(deviceId: deviceId, signatureKey: key.publicKey)
        let registrations = [
            FetchRegistration(
                server: healthy.baseURL, deviceId: deviceId, dispatchTargetId: healthyTarget, key: key,
                trust: healthyTrust),
            FetchRegistration(server: skewed.baseURL, deviceId: deviceId, dispatchTargetId: skewedTarget, key: key),
            FetchRegistration(server: downURL, deviceId: deviceId, dispatchTargetId: "unreachable", key: key),
            FetchRegistration(
                server: repinned.baseURL, deviceId: deviceId, dispatchTargetId: repinnedTarget, key: key,
                trust: repinnedTrust),
        ]

        // 4. Operations through the three channels.
        let push = try healthy.dispatch(deviceId: deviceId, channel: DispatchChannel.pushNotification.wireValue)
        let qr = try healthy.dispatch(deviceId: deviceId, channel: DispatchChannel.qrCode.wireValue)
        let link = try healthy.dispatch(deviceId: deviceId, channel: DispatchChannel.link.wireValue)
        try skewed.dispatch(deviceId: deviceId, channel: DispatchChannel.pushNotification.wireValue)
        step(
            4,
            "The healthy backend dispatched three operations: push \(Self.short(push.token)), QR code \(Self.short(qr.token)), link \(Self.short(link.token))."
        )

        // 5. A foreground trigger fetches from every backend at once. Redemption goes only to
        // the backends the device is registered on, whatever a push or QR code names.
        let redeemer = RedemptionClient(registrations: registrations)
        let client = FetchClient(configuration: .init(requestTimeout: .seconds(5)), clock: clock)
        let fetcher = RegisteredFetchClient(client: client, registrations: registrations)
        let notifications = InMemoryLocalNotifications(clock: clock)
        let stale = notifications.post(
            token: "token-of-an-operation-that-is-gone", server: healthy.baseURL.absoluteString)
        let observer = FetchCoordinator(
            fetcher: fetcher, pipeline: RedemptionPipeline(redeemer: redeemer),
            policy: .accessibility, notifications: notifications, startsChosenOperation: false, clock: clock)
        let first = await observer.handle(.foreground)
        let snapshot = try Self.require(first.snapshot, "the foreground trigger did not fetch")
        step(
            5,
            "App came to the foreground -> \(first.reason.rawValue): \(snapshot.operations.count) operations, \(snapshot.errors.count) errors."
        )
        for operation in snapshot.operations {
            say(
                "   \(Self.time(operation.creationTimeInEpochMillis))  \(operation.dispatchChannel.wireValue.padding(toLength: 25, withPad: " ", startingAt: 0)) \(Self.short(operation.token))"
            )
        }
        say(
            "   Local notification for a token no longer pending was cancelled: \(snapshot.cancelledNotifications.map(\.identifier) == [stale.identifier] ? "yes" : "no")."
        )

        // 6. A user action a second later is throttled: the cached result, no request.
        clock.advance(byMillis: 1_000)
        let requestsBefore = healthy.statistics.requests(to: .operations)
        let second = await observer.handle(.userAction)
        step(
            6,
            "User pulled to refresh 1 s later -> \(second.reason.rawValue): the cached result, \(healthy.statistics.requests(to: .operations) - requestsBefore) new requests (window: 5 s)."
        )

        // 7. The two channel policies pick different operations.
        let pushOnly = OperationSelection.eligible(snapshot.operations, policy: .pushOnly, states: [:]).last
        let accessible = OperationSelection.eligible(snapshot.operations, policy: .accessibility, states: [:]).last
        step(7, "Channel policy decides what to start (the latest eligible operation):")
        say(
            "   .pushOnly       -> \(pushOnly.map { "\($0.dispatchChannel.wireValue) \(Self.short($0.token))" } ?? "nothing")"
        )
        say(
            "   .accessibility  -> \(accessible.map { "\($0.dispatchChannel.wireValue) \(Self.short($0.token))" } ?? "nothing")"
        )

        // 8. A push for the operation a fetch is about to start: redeemed exactly once.
        let pipeline = RedemptionPipeline(redeemer: redeemer)
        let starter = FetchCoordinator(fetcher: fetcher, pipeline: pipeline, policy: .pushOnly, clock: clock)
        let payload = PendingOutOfBandOperation.Payload(
            contentType: WireMediaType.json, version: "1",
            redeemData: .init(token: push.token, redeemUrl: push.redeemURL))
        async let fetched = starter.handle(.foreground)
        async let pushed = starter.handle(.incoming(.pushNotification, payload))
        let (fetchOutcome, pushOutcome) = await (fetched, pushed)
        step(
            8,
            "A push for \(Self.short(push.token)) arrived while a fetch was returning it (one pipeline, (origin, token) = identity):"
        )
        say("   push  -> \(pushOutcome.incomingReport.map { "\($0.code) \(Self.short($0.token))" } ?? "-")")
        say(
            "   fetch -> \(fetchOutcome.snapshot?.started.map { "\($0.code) \(Self.short($0.token))" } ?? "started nothing: the token was already in progress or redeemed")"
        )
        say("   The backend redeemed it \(healthy.statistics.redemptions[push.token] ?? 0) time(s).")

        // 9. A redemption that fails is released and can be retried.
        try healthy.injectFault(EmulatorFault(endpoint: .redeem, kind: .status, status: 503, count: 1))
        let qrOperation = try Self.require(
            snapshot.operations.first { $0.token == qr.token }, "the QR operation was not fetched")
        let failed = await pipeline.redeem(qrOperation)
        let retried = await pipeline.redeem(qrOperation)
        step(
            9,
            "Redeeming the QR operation while the backend answers 503 -> \(failed.code); tried again -> \(retried.code)."
        )

        // 10. Clock skew and the down backend, in the same partial result.
        step(10, "The same fetch reported, beside the healthy backend's operations:")
        for error in snapshot.errors {
            let kind =
                (error.networkFailure?.kind.rawValue ?? error.invalidResponse?.kind.rawValue).map { " (\($0))" } ?? ""
            say("   \(error.code)\(kind) from \(error.server ?? "-")")
            if let offset = error.measuredOffsetMillis {
                say("     measured offset: \(offset) ms, tolerance: \(error.toleranceMillis ?? 0) ms")
            }
            say("     \(error.message)")
        }
        let codes = snapshot.errors.map(\.code)
        let kinds = snapshot.errors.compactMap(\.networkFailure?.kind)
        guard codes.contains("clockSkewTooBig"), kinds.contains(.connectionRefused), kinds.contains(.tlsPinMismatch),
            snapshot.operations.count == 3,
            healthy.statistics.redemptions[push.token] == 1, retried.code == "redeemed"
        else {
            throw CLIFailure(
                "the demo did not go as expected: errors \(codes), \(snapshot.operations.count) operations")
        }
        try await showTPMBoundKey(step: 11, store: store, beside: registrations[0], backend: healthy)
        say()
        say("Done. The temporary key store is removed; the backends stop.")
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
        guard let value else { throw CLIFailure(message) }
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

import DeviceSigning
import FetchChannel
import FetchChannelEmulator
import Foundation

/// A device registered on a reference backend that runs on the test's clock, with the real fetch
/// and redemption clients: what the coordinator tests against the backend start from.
struct ReferenceDevice {
    static let startMillis: Int64 = 1_750_000_000_000

    let clock: ManualWallClock
    let backend: ReferenceBackend
    let key: P256.Signing.PrivateKey
    let deviceId: String
    let registration: FetchRegistration

    /// A new backend on a new clock.
    init(deviceId: String = "device-practices") throws {
        let clock = ManualWallClock(millis: Self.startMillis)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        do {
            try self.init(backend: backend, clock: clock, key: try P256.Signing.PrivateKey(), deviceId: deviceId)
        } catch {
            // No device holds it, so no caller would stop it.
            backend.stop()
            throw error
        }
    }

    /// Another device on an existing backend.
    init(backend: ReferenceBackend, clock: ManualWallClock, key: P256.Signing.PrivateKey, deviceId: String) throws {
        self.clock = clock
        self.backend = backend
        self.key = key
        self.deviceId = deviceId
        let target = try backend.registerDispatchTarget(deviceId: deviceId, signatureKey: key.publicKey)
        registration = FetchRegistration(
            server: backend.baseURL, deviceId: deviceId, dispatchTargetId: target, key: key)
    }

    /// The real fetcher over this device's registration (none when `registered` is false).
    func fetcher(registered: Bool = true) -> RegisteredFetchClient {
        RegisteredFetchClient(client: FetchClient(clock: clock), registrations: registered ? [registration] : [])
    }

    func coordinator(
        policy: ChannelPolicy = .pushOnly, fetcher: (any PendingOperationsFetching)? = nil,
        redeemer: (any OperationRedeeming)? = nil, notifications: (any LocalNotifications)? = nil
    ) -> FetchCoordinator {
        FetchCoordinator(
            fetcher: fetcher ?? self.fetcher(), pipeline: RedemptionPipeline(redeemer: redeemer ?? RedemptionClient()),
            policy: policy, notifications: notifications, clock: clock)
    }

    /// Dispatches an operation to this device through `channel` and returns the payload its push,
    /// link or QR code would carry.
    @discardableResult
    func dispatch(_ channel: DispatchChannel = .pushNotification, lifetimeSeconds: Double? = nil) throws
        -> PendingOutOfBandOperation.Payload
    {
        let operation = try backend.dispatch(
            deviceId: deviceId, channel: channel.wireValue, lifetimeSeconds: lifetimeSeconds)
        return .init(
            contentType: "application/json", version: "1",
            redeemData: .init(token: operation.token, redeemUrl: operation.redeemURL))
    }
}

/// Holds each fetch, after its answer arrived, until released; or each redemption before it is sent.
final class Hold: Sendable {
    private struct State {
        var held: [CheckedContinuation<Void, Never>] = []
        var watcher: CheckedContinuation<Void, Never>?
    }

    private let state = Locked(State())

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let watcher = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.held.append(continuation)
                defer { state.watcher = nil }
                return state.watcher
            }
            watcher?.resume()
        }
    }

    /// Returns once something is held.
    func waitUntilHeld() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if !state.held.isEmpty { return true }
                state.watcher = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// How many are held now.
    var heldCount: Int { state.withLock { $0.held.count } }

    func releaseAll() {
        let held = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.held.removeAll() }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }
}

/// The real fetcher, with each answer held until released.
struct HeldFetcher: PendingOperationsFetching {
    let inner: any PendingOperationsFetching
    let hold: Hold

    func hasRegistration() async -> Bool { await inner.hasRegistration() }

    func fetch() async -> PendingOutOfBandOperationsResult {
        let result = await inner.fetch()
        await hold.wait()
        return result
    }
}

/// The real redeemer, with each redemption held before it is sent.
struct HeldRedeemer: OperationRedeeming {
    let inner: any OperationRedeeming
    let hold: Hold

    func redeem(_ payload: PendingOutOfBandOperation.Payload) async -> Result<RedeemedOperation, RedemptionError> {
        await hold.wait()
        return await inner.redeem(payload)
    }
}

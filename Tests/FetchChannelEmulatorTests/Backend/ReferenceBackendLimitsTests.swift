import DeviceSigning
import FetchChannel
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelEmulator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The bounds that keep one local client from filling the emulator for all, and how a request
/// past one is refused (docs/ARCHITECTURE.md, "Wire contract").
@Suite(.dedicatedThread) struct ReferenceBackendLimitsTests {
    let start: Int64 = 1_700_000_000_000

    /// A device's pending operations are bounded: the one past the bound is refused as the full
    /// store is (507 `TOO_MANY_OPERATIONS`), other devices are still served, and a redeemed or
    /// expired operation frees its place. Before, one device could take all 200,000.
    @Test func aDeviceWithItsMostPendingOperationsIsRefusedAndOthersAreServed() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock, pendingOperationsPerDevice: 3))
        defer { backend.stop() }
        let first = try backend.dispatch(deviceId: "phone-1", channel: "link", lifetimeSeconds: 60)
        try backend.dispatch(deviceId: "phone-1", channel: "link", lifetimeSeconds: 60)
        try backend.dispatch(deviceId: "phone-1", channel: "link", lifetimeSeconds: 120)

        let refused = try await BackendClient.dispatch(backend, ["deviceId": "phone-1", "channel": "link"])
        #expect(refused.status == 507)
        #expect(refused.errorCode == WireErrorCode.tooManyOperations.rawValue)
        #expect((refused.json["message"] as? String)?.contains("phone-1 has 3 pending operations") == true)
        #expect(throws: EmulatorError(code: .dispatchRefused, reason: "")) {
            try backend.dispatch(deviceId: "phone-1", channel: "link")
        }
        #expect(try await BackendClient.dispatch(backend, ["deviceId": "phone-2", "channel": "link"]).status == 201)

        // A redeemed operation is no longer pending.
        #expect(try await BackendClient.redeem(first.redeemURL, token: first.token).status == 200)
        #expect(try await BackendClient.dispatch(backend, ["deviceId": "phone-1", "channel": "link"]).status == 201)
        #expect(try await BackendClient.dispatch(backend, ["deviceId": "phone-1", "channel": "link"]).status == 507)
        // Nor is an expired one: the second expires after 60 s.
        clock.advance(byMillis: 61_000)
        #expect(try await BackendClient.dispatch(backend, ["deviceId": "phone-1", "channel": "link"]).status == 201)
    }

    /// The bound holds at the server clock's time. Dispatches within one millisecond get creation
    /// times a millisecond apart; checked at those, an operation of 1 ms dispatched first counted
    /// as expired at the next one's creation, while a fetch at the clock's time still lists it.
    @Test func theBoundHoldsAtTheClocksTimeForDispatchesWithinOneMillisecond() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock, pendingOperationsPerDevice: 3))
        defer { backend.stop() }
        try backend.dispatch(deviceId: "phone-1", channel: "link", lifetimeSeconds: 0.001)
        try backend.dispatch(deviceId: "phone-1", channel: "link", lifetimeSeconds: 60)
        try backend.dispatch(deviceId: "phone-1", channel: "link", lifetimeSeconds: 60)
        let refused = try await BackendClient.dispatch(backend, ["deviceId": "phone-1", "channel": "link"])
        #expect(refused.status == 507, "a fourth pending operation at the clock's time")
        // Once the short one has expired at the clock's time, its place is free.
        clock.advance(byMillis: 2)
        #expect(try await BackendClient.dispatch(backend, ["deviceId": "phone-1", "channel": "link"]).status == 201)
    }

    @Test func aPendingBoundBelowOneIsRefusedAtStart() {
        #expect(throws: DeviceSigningError(.invalidConfiguration, "")) {
            try ReferenceBackend.start(.init(pendingOperationsPerDevice: 0))
        }
    }

    /// A request body is read up to 64 KiB, far more than any endpoint needs; one byte more is
    /// 413 before it is read, whatever the HTTP configuration allows. Before, the server's
    /// default of 1 MiB applied.
    @Test func aRequestBodyOver64KiBIsRefusedBeforeItIsRead() async throws {
        let backend = try ReferenceBackend.start(.init(http: .init(limits: .init(maxBodyBytes: 1 << 20))))
        defer { backend.stop() }
        let dispatch = #"{"deviceId":"phone-1","channel":"link"}"#
        func padded(to size: Int) -> String {
            dispatch + String(repeating: " ", count: size - dispatch.utf8.count)
        }
        let json = "Content-Type: application/json\r\n"
        let limit = ReferenceBackend.maximumRequestBodyBytes
        #expect(limit == 64 * 1024)
        let atTheLimit = try await BackendClient.rawPost(
            backend, "/_emulator/dispatch", body: padded(to: limit), headers: json)
        #expect(atTheLimit.status == 201)
        let over = try await BackendClient.rawPost(
            backend, "/_emulator/dispatch", body: padded(to: limit + 1), headers: json)
        #expect(over.status == 413, "refused by the server, before any route (which never answers 413)")
    }

    /// `data` nested as deep as the client's reader allows in the answer (512 levels, data at the
    /// fifth) is dispatched and reads in the client; one level more is refused at dispatch. Before,
    /// it was taken, and every later fetch of the device failed as `invalidResponse`.
    @Test func dispatchRefusesDataNestedDeeperThanTheClientReads() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)
        func dispatch(depth: Int) async throws -> RawHTTPResponse {
            let data = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            return try await BackendClient.rawPost(
                backend, "/_emulator/dispatch",
                body: #"{"deviceId":"\#(device.deviceId)","channel":"link","data":\#(data)}"#,
                headers: "Content-Type: application/json\r\n")
        }
        let deepest = StrictJSON.Limits.standard.maximumDepth - 4
        #expect(deepest == 508)
        let accepted = try await dispatch(depth: deepest)
        #expect(accepted.status == 201, "\(accepted.bodyText)")
        let refused = try await dispatch(depth: deepest + 1)
        #expect(refused.status == 400)
        #expect(refused.bodyText.contains(WireErrorCode.malformedRequest.rawValue))
        #expect(refused.bodyText.contains("data must nest at most 508 arrays and objects"), "\(refused.bodyText)")

        let answer = try await BackendClient.fetch(backend, device)
        #expect(answer.status == 200)
        let operations = try PendingOperationsDecoder.decode(answer.body, server: backend.baseURL.absoluteString)
        #expect(operations.count == 1, "the accepted one, read by the client")
    }

    /// A lifetime is checked as it is stored, in whole milliseconds: 0.0004 s passed the check of
    /// the seconds and became an operation of 0 ms, expired at its creation and never listed.
    @Test func aLifetimeIsCheckedAsStoredInWholeMilliseconds() async throws {
        let backend = try ReferenceBackend.start(.init(clock: ManualWallClock(millis: start)))
        defer { backend.stop() }
        func lifetimeMillis(_ seconds: Double) async throws -> Int64? {
            let answer = try await BackendClient.dispatch(
                backend, ["deviceId": "phone-1", "channel": "link", "lifetimeSeconds": seconds])
            guard answer.status == 201 else {
                #expect(answer.status == 400)
                #expect((answer.json["message"] as? String)?.hasPrefix("lifetimeSeconds must be") == true)
                return nil
            }
            let information = answer.json["additionalInformation"] as? [String: Any]
            return (information?["lifetimeMillis"] as? NSNumber)?.int64Value
        }
        #expect(try await lifetimeMillis(0.0004) == nil, "0 ms once rounded")
        #expect(try await lifetimeMillis(0.001) == 1)
        #expect(try await lifetimeMillis(2_592_000) == 2_592_000_000)
        #expect(try await lifetimeMillis(2_592_000.001) == nil, "a millisecond over 30 days")
        #expect(throws: EmulatorError(code: .dispatchRefused, reason: "")) {
            try backend.dispatch(deviceId: "phone-1", channel: "link", lifetimeSeconds: 0.0001)
        }
    }

    /// The dispatch-target table is never emptied, so it is bounded (100,000; 2 here): once full,
    /// every registration is refused, 507 `TOO_MANY_TARGETS`, and nothing more is kept.
    @Test func aFullDispatchTargetTableRefusesRegistrations() throws {
        let clock = ServerClock(base: ManualWallClock(millis: start), offsetMillis: 0)
        let state = BackendState(targetCapacity: 2)
        let verifier = try DeviceSignatureVerifier(clock: clock, keyLookup: { state.target($0)?.signatureKey })
        let router = BackendRouter(
            configuration: ReferenceBackend.Configuration(), state: state, clock: clock, verifier: verifier,
            baseURL: Locked("http://127.0.0.1:1"))
        let jwk = try P256.Signing.PrivateKey().publicKey.jwk.jsonString
        func register(_ deviceId: String) throws -> HTTPResponse {
            let request = HTTPRequest(
                method: "POST", target: WirePaths.basePath + WirePaths.dispatchTargets,
                headers: [WireHeader.host: "127.0.0.1", WireHeader.contentType: WireMediaType.json],
                body: Array(#"{"deviceId":"\#(deviceId)","signatureKey":\#(jwk)}"#.utf8))
            guard case .respond(let response) = router.handle(request) else {
                throw EmulatorError(code: .dispatchRefused, reason: "no plain answer")
            }
            return response
        }
        #expect(try register("phone-1").status == 201)
        #expect(try register("phone-2").status == 201)
        for deviceId in ["phone-3", "phone-4"] {
            let refused = try register(deviceId)
            #expect(refused.status == 507)
            #expect(String(decoding: refused.body, as: UTF8.self).contains(WireErrorCode.tooManyTargets.rawValue))
            #expect(state.targetIds(ofDevice: deviceId).isEmpty)
        }
        #expect(BackendState.maximumTargets == 100_000)
    }

    /// The replay cache (1,000,000 request ids by default; 2 here) refuses a request it has no
    /// room for, 503 `REPLAY_CACHE_FULL`, rather than grow or forget a live id; room comes back
    /// as ids expire.
    @Test func aFullReplayCacheRefusesRequestsUntilIdsExpire() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(
            .init(clock: clock, replayCacheCapacity: 2, replayQuotaPerDispatchTarget: 2))
        defer { backend.stop() }
        let first = try TestDevice(backend: backend, clock: clock)
        let second = try TestDevice(backend: backend, clock: clock)
        #expect(try await BackendClient.fetch(backend, first).status == 200)
        #expect(try await BackendClient.fetch(backend, second).status == 200)
        let refused = try await BackendClient.fetch(backend, first)
        #expect(refused.status == 503)
        #expect(refused.errorCode == WireErrorCode.replayCacheFull.rawValue)
        #expect(ReferenceBackend.Configuration().replayCacheCapacity == 1_000_000)

        clock.set(millis: start + 60_001)  // past the tolerance: both ids have expired
        #expect(try await BackendClient.fetch(backend, first).status == 200)
    }
}

import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelEmulator

/// The replay cache's per-dispatch-target quota on the wire: 429 with `Retry-After` for the
/// dispatch target over it, 200 for every other.
@Suite(.dedicatedThread) struct ReferenceBackendReplayQuotaTests {
    @Test func aDispatchTargetOverItsQuotaGets429WithRetryAfterAndOthersAreServed() async throws {
        let start: Int64 = 1_700_000_000_000
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(
            .init(
                toleranceMillis: 60_000, clock: clock,
                replayQuotaPerDispatchTarget: 2))
        defer { backend.stop() }
        let flooding = try TestDevice(backend: backend, clock: clock)
        let other = try TestDevice(backend: backend, clock: clock)

        #expect(try await BackendClient.fetch(backend, flooding).status == 200)
        #expect(try await BackendClient.fetch(backend, flooding).status == 200)
        clock.advance(byMillis: 2_500)
        let refused = try await BackendClient.fetch(backend, flooding)
        #expect(refused.status == 429)
        #expect(refused.errorCode == "REPLAY_QUOTA_EXCEEDED")
        // The oldest entry (accepted at start) is remembered until start + 60 s inclusive:
        // 57.501 s from now, rounded up.
        #expect(refused.header("Retry-After") == "58")
        #expect(try await BackendClient.fetch(backend, other).status == 200)

        clock.set(millis: start + 60_001)
        let again = try await BackendClient.fetch(backend, flooding)
        #expect(again.status == 200, "served again once its oldest entry expired")
    }
}

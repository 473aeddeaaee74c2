import DeviceSigning
import FetchChannelEmulator
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelBenchmarks

/// The libcurl baseline of the client CPU rows signs its requests in chunks, each just before it
/// is sent: signed all at once, the requests of a long run went out after the backend's
/// tolerance had passed and were refused, and the whole bench failed.
@Suite(.dedicatedThread) struct LibcurlBaselineChunksTests {
    /// A signer's clock that moves the backend's clock one second forward at every signature: a
    /// request signed N signatures before it is sent is N seconds old when the backend reads it,
    /// as on a machine where signing and sending are slow, without waiting for any time to pass.
    struct SecondPerSignature: WallClock {
        let clock: ManualWallClock
        func nowMillis() -> Int64 {
            clock.advance(byMillis: 1_000)
            return clock.nowMillis()
        }
    }

    @Test func aRunOfSeveralChunksStaysInsideTheToleranceAndCountsEveryRequest() async throws {
        let clock = ManualWallClock(millis: 1_800_000_000_000)
        // 150 requests at a second each are 150 s of signatures, against a 60 s tolerance.
        let backend = try ReferenceBackend.start(
            .init(toleranceMillis: 60_000, clock: clock, replayQuotaPerDispatchTarget: 1_000_000))
        defer { backend.stop() }
        let key = try P256.Signing.PrivateKey()
        let deviceId = "baseline-chunks"
        let target = try backend.registerDispatchTarget(deviceId: deviceId, signatureKey: key.publicKey)
        for _ in 0..<ClientCPUBenchmark.operationsPerAnswer {
            try backend.dispatch(deviceId: deviceId, channel: "firebase-cloud-messaging", lifetimeSeconds: 3_600)
        }
        let signer = try DeviceSignatureSigner(
            key: key, dispatchTargetId: target, clock: SecondPerSignature(clock: clock))
        let client = try LibcurlBaselineClient(
            url: backend.baseURL.appendingPathComponent(FetchPaths.default.pendingOperationsPath(deviceId: deviceId)),
            certificateAuthorityPEM: nil)

        let seconds = try await ClientCPUBenchmark.libcurlCPUSeconds(
            client: client, signer: signer, requests: 150, chunkRequests: 40)
        #expect(seconds >= 0)
        // The three of the warm-up, then every request of the four chunks (40, 40, 40, 30).
        #expect(backend.statistics.requests(to: .operations) == 3 + 150)
    }
}

import DeviceSigning
import FetchChannelWire
import Testing

/// The verifier's rejections as the backend answers them (docs/ARCHITECTURE.md, "Wire contract").
@Suite struct DeviceSignatureRejectionWireTests {
    @Test func rejectionCodesAndStatusesAreStable() {
        let cases: [(DeviceSignatureRejection, String, Int)] = [
            (.malformed(reason: "x"), "MALFORMED_REQUEST", 400),
            (.unknownDispatchTarget("t"), "UNKNOWN_DISPATCH_TARGET", 401),
            (.invalidSignature, "INVALID_SIGNATURE", 401),
            (.clockSkewTooBig(serverTimeMillis: 0, creationTimeMillis: 61_000), "CLOCK_SKEW_TOO_BIG", 401),
            (.replayedRequest("r"), "REPLAYED_REQUEST", 401),
            (.replayCacheFull(capacity: 1), "REPLAY_CACHE_FULL", 503),
            (.replayQuotaExceeded(quota: 1_000, retryAfterSeconds: 7), "REPLAY_QUOTA_EXCEEDED", 429),
        ]
        for (rejection, code, status) in cases {
            #expect(rejection.code == code)
            #expect(rejection.httpStatus.code == status)
            #expect(rejection.description.hasPrefix(code + ": "))
            #expect(rejection.retryAfterSeconds == (status == 429 ? 7 : nil))
        }
    }
}

import FetchChannelWire
import Foundation
import Synchronization
import Testing

@testable import DeviceSigning

@Suite struct DeviceSignatureVerifierTests {
    typealias F = DeviceSignatureFixtures
    static let tolerance: Int64 = 60_000

    /// The key an unknown dispatch target's signature is checked against (so that the time taken
    /// is a known target's) is a valid point: the generator, the public key of the scalar 1.
    @Test func theStandInKeyIsTheGenerator() throws {
        let one = try P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0, count: 31) + [1])
        #expect(Array(one.publicKey.x963Representation) == DeviceSignatureVerifier.generatorPoint())
    }

    /// A signer at `F.t0 + creationOffset` and a verifier at `F.t0`.
    private func signedAt(creationOffset: Int64, requestId: String = "edge") throws -> (String, DeviceSignatureVerifier)
    {
        let key = try F.fixtureKey()
        let signer = try DeviceSignatureSigner(
            key: key, dispatchTargetId: F.target, clock: ManualWallClock(millis: F.t0 + creationOffset)
        ) { requestId }
        let verifier = try F.verifier(
            key: key.publicKey, clock: ManualWallClock(millis: F.t0), toleranceMillis: Self.tolerance)
        return (try signer.headerValue(), verifier)
    }

    @Test(arguments: [-tolerance, -1, 0, 1, tolerance])
    func creationTimeWithinToleranceIsAccepted(offset: Int64) throws {
        let (value, verifier) = try signedAt(creationOffset: offset)
        let verified = try verifier.verify(value).get()
        #expect(verified.skewMillis == offset)
        #expect(verified.serverTimeMillis == F.t0)
    }

    @Test(arguments: [-tolerance - 1, tolerance + 1, -10 * tolerance, 10 * tolerance])
    func creationTimeBeyondToleranceIsClockSkew(offset: Int64) throws {
        let (value, verifier) = try signedAt(creationOffset: offset)
        let rejection = verifier.verify(value)
        #expect(rejection == .failure(.clockSkewTooBig(serverTimeMillis: F.t0, creationTimeMillis: F.t0 + offset)))
        #expect(rejection.failureCode == "CLOCK_SKEW_TOO_BIG")
    }

    @Test func zeroToleranceAcceptsOnlyTheSameMillisecond() throws {
        let key = try F.fixtureKey()
        let clock = ManualWallClock(millis: F.t0)
        let ids = CountingRequestIds()
        let signer = try DeviceSignatureSigner(
            key: key, dispatchTargetId: F.target, clock: clock, requestIdGenerator: ids.generate)
        let verifier = try F.verifier(key: key.publicKey, clock: clock, toleranceMillis: 0)
        #expect(throws: Never.self) { try verifier.verify(try signer.headerValue()).get() }
        #expect(verifier.verify(try signer.headerValue(offsetMillis: 1)).failureCode == "CLOCK_SKEW_TOO_BIG")
        #expect(verifier.verify(try signer.headerValue(offsetMillis: -1)).failureCode == "CLOCK_SKEW_TOO_BIG")
    }

    @Test(arguments: [(Int64(0), Int64.min), (0, .max), (.max, .min), (.min, .max), (-1, .max), (.max, -1)])
    func hostileTimesDoNotOverflow(server: Int64, creation: Int64) throws {
        let key = try F.fixtureKey()
        let signer = try DeviceSignatureSigner(
            key: key, dispatchTargetId: F.target, clock: ManualWallClock(millis: creation))
        let verifier = try F.verifier(
            key: key.publicKey, clock: ManualWallClock(millis: server), toleranceMillis: .max / 2)
        let rejection = verifier.verify(try signer.headerValue())
        #expect(rejection == .failure(.clockSkewTooBig(serverTimeMillis: server, creationTimeMillis: creation)))
        if case .failure(let reason) = rejection { #expect(!reason.reason.isEmpty) }
    }

    @Test(arguments: [Int64.max, Int64.min])
    func extremeClocksStillAcceptAndBlockReplays(time: Int64) throws {
        let key = try F.fixtureKey()
        let clock = ManualWallClock(millis: time)
        let signer = try DeviceSignatureSigner(key: key, dispatchTargetId: F.target, clock: clock)
        // The largest tolerance: the expiry max(c, now) + tolerance saturates instead of trapping.
        let verifier = try F.verifier(key: key.publicKey, clock: clock, toleranceMillis: .max)
        let value = try signer.headerValue()
        #expect(throws: Never.self) { try verifier.verify(value).get() }
        #expect(verifier.verify(value).failureCode == "REPLAYED_REQUEST")
    }

    @Test func invalidConfigurationIsRefused() throws {
        let key = try F.fixtureKey().publicKey
        #expect(throws: DeviceSigningError(.invalidConfiguration, "")) {
            try DeviceSignatureVerifier(toleranceMillis: -1, clock: ManualWallClock(millis: 0)) { _ in key }
        }
        #expect(throws: DeviceSigningError(.invalidConfiguration, "")) {
            try DeviceSignatureVerifier(clock: ManualWallClock(millis: 0), replayCacheCapacity: 0) { _ in key }
        }
        #expect(throws: DeviceSigningError(.invalidConfiguration, "")) {
            try DeviceSignatureVerifier(clock: ManualWallClock(millis: 0), replayQuotaPerDispatchTarget: 0) { _ in key }
        }
    }

    // MARK: - Order of checks

    @Test func unknownTargetIsDecidedBeforeTheSignature() throws {
        let other = try P256.Signing.PrivateKey()
        let key = try F.fixtureKey()
        let value = try F.jws(
            header: F.standardHeader("nobody"),
            payload: F.payloadJSON(target: "nobody", requestId: "r", creation: "\(F.t0)"), key: other)
        let verifier = try F.verifier(key: key.publicKey, clock: ManualWallClock(millis: F.t0))
        #expect(verifier.verify(value) == .failure(.unknownDispatchTarget("nobody")))
    }

    @Test func signatureIsDecidedBeforeThePayloadAndTheClock() throws {
        let other = try P256.Signing.PrivateKey()
        let key = try F.fixtureKey()
        let verifier = try F.verifier(key: key.publicKey, clock: ManualWallClock(millis: F.t0))
        // Stale and mistyped, but signed by the wrong key: INVALID_SIGNATURE, nothing about the payload.
        let stale = try F.jws(
            header: F.standardHeader(), payload: F.payloadJSON(requestId: "r", creation: "0"), key: other)
        let mistyped = try F.jws(
            header: F.standardHeader(), payload: F.payloadJSON(requestId: "r", creation: "\"x\""), key: other)
        #expect(verifier.verify(stale) == .failure(.invalidSignature))
        #expect(verifier.verify(mistyped) == .failure(.invalidSignature))
    }

    @Test func payloadIsDecidedBeforeTheClock() throws {
        let key = try F.fixtureKey()
        let verifier = try F.verifier(key: key.publicKey, clock: ManualWallClock(millis: F.t0))
        let staleAndMismatched = try F.jws(
            header: F.standardHeader(), payload: F.payloadJSON(target: "someone-else", requestId: "r", creation: "0"),
            key: key)
        #expect(verifier.verify(staleAndMismatched).failureCode == "MALFORMED_REQUEST")
    }

    @Test func clockIsDecidedBeforeReplay() throws {
        let key = try F.fixtureKey()
        let clock = ManualWallClock(millis: F.t0)
        let verifier = try F.verifier(key: key.publicKey, clock: clock)
        let signer = try DeviceSignatureSigner(key: key, dispatchTargetId: F.target, clock: clock)
        let value = try signer.headerValue()
        #expect(throws: Never.self) { try verifier.verify(value).get() }
        clock.advance(byMillis: Self.tolerance + 1)
        #expect(verifier.verify(value).failureCode == "CLOCK_SKEW_TOO_BIG")
    }

    @Test func rejectedRequestsDoNotConsumeTheirRequestId() throws {
        let key = try F.fixtureKey()
        let clock = ManualWallClock(millis: F.t0)
        let verifier = try F.verifier(key: key.publicKey, clock: clock)
        let signer = try DeviceSignatureSigner(key: key, dispatchTargetId: F.target, clock: clock) { "shared-id" }
        let good = try signer.headerValue()
        let parts = F.parts(good)
        // Same request id: a forged signature, and a stale creation time.
        let forged = try F.jws(
            header: F.standardHeader(), payload: F.payloadJSON(requestId: "shared-id", creation: "\(F.t0)"),
            key: try P256.Signing.PrivateKey())
        let stale = try signer.headerValue(offsetMillis: -Self.tolerance - 1)
        let tampered = "\(parts[0]).\(F.parts(stale)[1]).\(parts[2])"
        #expect(verifier.verify(forged) == .failure(.invalidSignature))
        #expect(verifier.verify(tampered) == .failure(.invalidSignature))
        #expect(verifier.verify(stale).failureCode == "CLOCK_SKEW_TOO_BIG")
        #expect(verifier.replayCacheCount == 0)
        #expect(throws: Never.self) { try verifier.verify(good).get() }
        #expect(verifier.replayCacheCount == 1)
    }

    // MARK: - Header and payload rules

    @Test func keyLookupIsNotCalledForMalformedKid() throws {
        let key = try F.fixtureKey()
        let lookups = Mutex(0)
        let verifier = try DeviceSignatureVerifier(clock: ManualWallClock(millis: F.t0)) { _ in
            lookups.withLock { $0 += 1 }
            return key.publicKey
        }
        for kid in [#""#, #"a\u0000b"#, String(repeating: "k", count: 257)] {
            let value = try F.jws(
                header: F.standardHeader(kid), payload: F.payloadJSON(target: kid, requestId: "r", creation: "\(F.t0)"),
                key: key)
            #expect(verifier.verify(value).failureCode == "MALFORMED_REQUEST", "kid \(kid.prefix(20))")
        }
        #expect(lookups.withLock { $0 } == 0)
    }

    @Test func typIsOptionalButIfPresentMustBeJWT() throws {
        let key = try F.fixtureKey()
        let verifier = try F.verifier(key: key.publicKey, clock: ManualWallClock(millis: F.t0))
        let noTyp = try F.jws(
            header: #"{"alg":"ES256","kid":"\#(F.target)"}"#,
            payload: F.payloadJSON(requestId: "a", creation: "\(F.t0)"), key: key)
        #expect(throws: Never.self) { try verifier.verify(noTyp).get() }
        for typ in [#""jwt""#, #""JOSE""#, "1", "null"] {
            let value = try F.jws(
                header: #"{"alg":"ES256","kid":"\#(F.target)","typ":\#(typ)}"#,
                payload: F.payloadJSON(requestId: "b", creation: "\(F.t0)"), key: key)
            #expect(verifier.verify(value).failureCode == "MALFORMED_REQUEST", "typ \(typ)")
        }
    }

    @Test(arguments: [
        ("string", #""1767225600000""#), ("fraction", "1767225600000.5"), ("true", "true"), ("false", "false"),
        ("null", "null"), ("2^63", "9223372036854775808"), ("-2^63-1", "-9223372036854775809"),
        ("array", "[1767225600000]"), ("object", #"{"ms":1767225600000}"#), ("huge", "1e400"),
        // Not integers, though a Double rounds them to one (to T and to T + 1).
        ("a ten-thousandth", "1767225600000.0001"), ("almost the next", "1767225600000.99999999999999999"),
        ("an exponent short of an integer", "17672256000001e-1"),
    ])
    func creationTimeMustBeAnInt64(label: String, literal: String) throws {
        let key = try F.fixtureKey()
        let verifier = try F.verifier(key: key.publicKey, clock: ManualWallClock(millis: F.t0))
        let value = try F.jws(
            header: F.standardHeader(), payload: F.payloadJSON(requestId: "r", creation: literal), key: key)
        let result = verifier.verify(value)
        #expect(result.failureCode == "MALFORMED_REQUEST", "\(label)")
        if case .failure(.malformed(let reason)) = result {
            #expect(reason.contains("creationTimeInEpochMillis"), "\(label): \(reason)")
        }
    }

    /// Decision: JSON has one number type, so an integral value written as 1767225600000.0 or
    /// 1.7672256e12 is that integer (judged on its digits); only non-integral values are refused.
    @Test(arguments: [
        "1767225600000.0", "1.7672256e12", "17672256000000E-1", "1767225600000.000e0", "0.1767225600000e13",
    ])
    func integralNumbersInOtherNotationsAreThatInteger(literal: String) throws {
        let key = try F.fixtureKey()
        let verifier = try F.verifier(key: key.publicKey, clock: ManualWallClock(millis: F.t0), toleranceMillis: 0)
        let value = try F.jws(
            header: F.standardHeader(), payload: F.payloadJSON(requestId: "r", creation: literal), key: key)
        #expect(try verifier.verify(value).get().creationTimeMillis == F.t0)
    }

    @Test(arguments: [
        ("missing dispatchTargetId", #"{"requestId":"r","creationTimeInEpochMillis":1767225600000}"#),
        (
            "missing requestId",
            #"{"dispatchTargetId":"0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40","creationTimeInEpochMillis":1767225600000}"#
        ),
        ("missing creation time", #"{"dispatchTargetId":"0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40","requestId":"r"}"#),
        (
            "numeric requestId",
            #"{"dispatchTargetId":"0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40","requestId":7,"creationTimeInEpochMillis":1767225600000}"#
        ),
        (
            "null dispatchTargetId",
            #"{"dispatchTargetId":null,"requestId":"r","creationTimeInEpochMillis":1767225600000}"#
        ),
        (
            "empty requestId",
            #"{"dispatchTargetId":"0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40","requestId":"","creationTimeInEpochMillis":1767225600000}"#
        ),
        ("array", #"["0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40","r",1767225600000]"#),
        ("not JSON", #"{"dispatchTargetId":"#),
        ("empty", ""),
        (
            "case-differing target",
            #"{"dispatchTargetId":"0F6A2B54-9A1C-4C3E-8D7F-2B1E5C9A7D40","requestId":"r","creationTimeInEpochMillis":1767225600000}"#
        ),
    ])
    func malformedPayloadsAreRefused(label: String, payload: String) throws {
        let key = try F.fixtureKey()
        let verifier = try F.verifier(key: key.publicKey, clock: ManualWallClock(millis: F.t0))
        let value = try F.jws(header: F.standardHeader(), payload: payload, key: key)
        let result = verifier.verify(value)
        #expect(result.failureCode == "MALFORMED_REQUEST", "\(label)")
        #expect(verifier.replayCacheCount == 0)
    }

    @Test func dispatchTargetIdMustEqualKidByteForByte() throws {
        // "é" precomposed (kid) and decomposed (payload): equal as Swift Strings, different bytes.
        let kid = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(kid == decomposed)
        let key = try F.fixtureKey()
        let verifier = try F.verifier(key: key.publicKey, targets: [kid], clock: ManualWallClock(millis: F.t0))
        let value = try F.jws(
            header: F.standardHeader(kid),
            payload: F.payloadJSON(target: decomposed, requestId: "r", creation: "\(F.t0)"), key: key)
        #expect(verifier.verify(value).failureCode == "MALFORMED_REQUEST")
    }

    @Test func unknownPayloadMembersAreIgnored() throws {
        let key = try F.fixtureKey()
        let verifier = try F.verifier(key: key.publicKey, clock: ManualWallClock(millis: F.t0))
        let payload =
            #"{"dispatchTargetId":"\#(F.target)","extra":{"nested":[1,2,true]},"requestId":"r","creationTimeInEpochMillis":\#(F.t0)}"#
        #expect(
            try verifier.verify(try F.jws(header: F.standardHeader(), payload: payload, key: key)).get().requestId
                == "r")
    }

    /// Validly signed headers with two members of one name: JSONSerialization would keep the last
    /// (`alg` ES256, `kid` the registered target) and accept; they are refused as malformed.
    @Test(arguments: [
        #"{"alg":"none","alg":"ES256","kid":"0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40","typ":"JWT"}"#,
        #"{"alg":"ES256","kid":"other","\u006bid":"0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40","typ":"JWT"}"#,
        #"{"alg":"ES256","kid":"0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40","typ":"JOSE","typ":"JWT"}"#,
        #"{"alg":"ES256","kid":"0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40","jwk":{"x":"a","x":"b"}}"#,
    ])
    func headerWithADuplicateMemberIsMalformed(header: String) throws {
        let key = try F.fixtureKey()
        let verifier = try F.verifier(key: key.publicKey, clock: ManualWallClock(millis: F.t0))
        let value = try F.jws(header: header, payload: F.payloadJSON(requestId: "dup", creation: "\(F.t0)"), key: key)
        let result = verifier.verify(value)
        #expect(result.failureCode == "MALFORMED_REQUEST", "\(header)")
        if case .failure(.malformed(let reason)) = result { #expect(reason.contains("more than once"), "\(reason)") }
        #expect(verifier.replayCacheCount == 0)
    }

    /// Validly signed payloads with two members of one name: JSONDecoder would keep the first and
    /// accept; they are refused as malformed, at every depth. (Each argument follows
    /// `{"dispatchTargetId":"<target>",`.)
    @Test(arguments: [
        #""requestId":"a","requestId":"b","creationTimeInEpochMillis":1767225600000}"#,
        #""requestId":"a","req\u0075estId":"b","creationTimeInEpochMillis":1767225600000}"#,
        #""requestId":"a","creationTimeInEpochMillis":1767225600000,"creationTimeInEpochMillis":0}"#,
        #""requestId":"a","creationTimeInEpochMillis":1767225600000,"x":[{"y":1,"y":2}]}"#,
    ])
    func payloadWithADuplicateMemberIsMalformed(members: String) throws {
        let payload = #"{"dispatchTargetId":"\#(F.target)","# + members
        let key = try F.fixtureKey()
        let verifier = try F.verifier(key: key.publicKey, clock: ManualWallClock(millis: F.t0))
        let result = verifier.verify(try F.jws(header: F.standardHeader(), payload: payload, key: key))
        #expect(result.failureCode == "MALFORMED_REQUEST", "\(payload)")
        if case .failure(.malformed(let reason)) = result { #expect(reason.contains("more than once"), "\(reason)") }
        #expect(verifier.replayCacheCount == 0)
    }

    // MARK: - Size limits

    @Test func protectedHeaderLimitIsOneKiB() throws {
        let key = try F.fixtureKey()
        let verifier = try F.verifier(key: key.publicKey, clock: ManualWallClock(millis: F.t0))
        func header(bytes: Int) -> String {
            let base = #"{"alg":"ES256","kid":"\#(F.target)","typ":"JWT","pad":""}"#
            return
                #"{"alg":"ES256","kid":"\#(F.target)","typ":"JWT","pad":"\#(String(repeating: "p", count: bytes - base.utf8.count))"}"#
        }
        #expect(header(bytes: 1024).utf8.count == 1024)
        let atLimit = try F.jws(
            header: header(bytes: 1024), payload: F.payloadJSON(requestId: "a", creation: "\(F.t0)"), key: key)
        let beyond = try F.jws(
            header: header(bytes: 1025), payload: F.payloadJSON(requestId: "b", creation: "\(F.t0)"), key: key)
        #expect(throws: Never.self) { try verifier.verify(atLimit).get() }
        let result = verifier.verify(beyond)
        #expect(result.failureCode == "MALFORMED_REQUEST")
        if case .failure(.malformed(let reason)) = result { #expect(reason.contains("1024")) }
    }

    @Test func payloadLimitIsFourKiB() throws {
        let key = try F.fixtureKey()
        let verifier = try F.verifier(key: key.publicKey, clock: ManualWallClock(millis: F.t0))
        func payload(bytes: Int, requestId: String) -> String {
            let base =
                #"{"dispatchTargetId":"\#(F.target)","requestId":"\#(requestId)","creationTimeInEpochMillis":\#(F.t0),"pad":""}"#
            return
                #"{"dispatchTargetId":"\#(F.target)","requestId":"\#(requestId)","creationTimeInEpochMillis":\#(F.t0),"pad":"\#(String(repeating: "p", count: bytes - base.utf8.count))"}"#
        }
        #expect(payload(bytes: 4096, requestId: "a").utf8.count == 4096)
        let atLimit = try F.jws(header: F.standardHeader(), payload: payload(bytes: 4096, requestId: "a"), key: key)
        let beyond = try F.jws(header: F.standardHeader(), payload: payload(bytes: 4097, requestId: "b"), key: key)
        #expect(throws: Never.self) { try verifier.verify(atLimit).get() }
        let result = verifier.verify(beyond)
        #expect(result.failureCode == "MALFORMED_REQUEST")
        if case .failure(.malformed(let reason)) = result { #expect(reason.contains("4096")) }
    }

    @Test func headerValueLimitIsSixteenKiB() throws {
        let key = try F.fixtureKey()
        let verifier = try F.verifier(key: key.publicKey, clock: ManualWallClock(millis: F.t0))
        let value = try DeviceSignatureSigner(
            key: key, dispatchTargetId: F.target, clock: ManualWallClock(millis: F.t0)
        ).headerValue()
        let huge = value + String(repeating: "A", count: 16 * 1024)
        let result = verifier.verify(huge)
        #expect(result.failureCode == "MALFORMED_REQUEST")
        if case .failure(.malformed(let reason)) = result { #expect(reason.contains("16384")) }
    }

    // MARK: - Rejection reasons (codes and statuses: FetchChannelWireTests)

    @Test func rejectionReasonsAndRetryDelaysAreStable() {
        #expect(DeviceSignatureRejection.replayQuotaExceeded(quota: 1_000, retryAfterSeconds: 7).retryAfterSeconds == 7)
        #expect(DeviceSignatureRejection.replayCacheFull(capacity: 1).retryAfterSeconds == nil)
        #expect(DeviceSignatureRejection.invalidSignature.retryAfterSeconds == nil)
        #expect(
            DeviceSignatureRejection.clockSkewTooBig(serverTimeMillis: 0, creationTimeMillis: 61_000).reason.contains(
                "61000 ms ahead of"))
        #expect(
            DeviceSignatureRejection.clockSkewTooBig(serverTimeMillis: 61_000, creationTimeMillis: 0).reason.contains(
                "61000 ms behind"))
        #expect(
            DeviceSignatureRejection.clockSkewTooBig(serverTimeMillis: .max, creationTimeMillis: .min).reason.contains(
                "behind"))
    }
}

extension Result where Failure == DeviceSignatureRejection {
    /// The rejection code, or nil when accepted.
    var failureCode: String? {
        if case .failure(let rejection) = self { return rejection.code }
        return nil
    }
}

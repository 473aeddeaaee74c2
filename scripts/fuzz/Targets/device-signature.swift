// Fuzz target `device-signature`: DeviceSignatureVerifier on arbitrary header values, the payload
// decoder, and the signer → verifier round trip.
//
// Input: a mode byte, then (scripts/fuzz/seeds.py writes seeds in these layouts)
// - 0: 8-byte clock (ms, little-endian), header value text → `verify` at that clock, with the
//      vectors' two dispatch targets registered with the fixed key;
// - 1: payload JSON → `DeviceSignaturePayload.decode`;
// - 2: 8-byte clock, payload JSON → signed with the fixed key under the header
//      {"alg":"ES256","kid":<registered id>,"typ":"JWT"}, then verified: reaches the payload,
//      freshness and replay checks that an unsigned input never reaches;
// - 3: length-prefixed dispatch target id, length-prefixed request id, 8-byte creation time →
//      `DeviceSignatureSigner` then the verifier at the creation time: what the signer produces
//      the verifier must accept, with the same ids (byte for byte) and time.
// Every accepted value must be refused the second time (`.replayedRequest`).

import Foundation

@testable import DeviceSigning
import FetchChannelWire

private let registered: Set<String> = [FuzzKeys.dispatchTargetId, "target \"quoted\" \\ back/slash é 🔑"]
private let publicKey = FuzzKeys.publicKey
private let fixedHeader = Base64.encodeToBytes(
    Array(#"{"alg":"ES256","kid":"0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40","typ":"JWT"}"#.utf8), alphabet: .url)
private let codes: Set<String> = [
    "MALFORMED_REQUEST", "UNKNOWN_DISPATCH_TARGET", "INVALID_SIGNATURE", "CLOCK_SKEW_TOO_BIG",
    "REPLAYED_REQUEST", "REPLAY_CACHE_FULL",
]

private func makeVerifier(clock: Int64, lookup: @escaping DeviceSignatureVerifier.KeyLookup) -> DeviceSignatureVerifier {
    do {
        return try DeviceSignatureVerifier(clock: ManualWallClock(millis: clock), keyLookup: lookup)
    } catch {
        fatalError("the verifier's default configuration is refused: \(error)")
    }
}

/// Verifies `value` twice on a fresh verifier; checks the outcome and the replay refusal.
@discardableResult
private func verifyTwice(_ value: String, clock: Int64, lookup: @escaping DeviceSignatureVerifier.KeyLookup)
    -> VerifiedDeviceSignature? {
    let verifier = makeVerifier(clock: clock, lookup: lookup)
    switch verifier.verify(value) {
    case .failure(let rejection):
        fuzzCheck(codes.contains(rejection.code), "unknown rejection code \(rejection.code)")
        fuzzCheck(!rejection.reason.isEmpty && [400, 401, 503].contains(rejection.httpStatus.code), "rejection \(rejection)")
        fuzzCheck(verifier.replayCacheCount == 0, "a refused value was remembered")
        return nil
    case .success(let verified):
        fuzzCheck(lookup(verified.dispatchTargetId) != nil, "accepted an unregistered dispatch target")
        fuzzCheck((1...DeviceSignatureLimits.maximumRequestIdLength).contains(verified.requestId.utf16.count),
                  "accepted a request id of \(verified.requestId.utf16.count) UTF-16 code units")
        fuzzCheck(verified.serverTimeMillis == clock, "server time is not the clock")
        fuzzCheck(verified.skewMillis.magnitude <= UInt64(verifier.toleranceMillis), "accepted a skew of \(verified.skewMillis) ms")
        switch verifier.verify(value) {
        case .failure(.replayedRequest(let requestId)):
            fuzzCheck(requestId == verified.requestId, "replay names another request id")
        case let other:
            fuzzCheck(false, "the same value verified twice gives \(other) instead of a replay refusal")
        }
        return verified
    }
}

private func registeredLookup(_ id: String) -> P256.Signing.PublicKey? {
    registered.contains(id) ? publicKey : nil
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDeviceSignature(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzReader(fuzzBytes(data, size))
    switch input.byte() % 4 {
    case 0:
        let clock = input.int64()
        verifyTwice(String(decoding: input.rest(), as: UTF8.self), clock: clock, lookup: registeredLookup)

    case 1:
        let json = input.rest()
        switch DeviceSignaturePayload.decode(Data(json)) {
        case .success(let payload):
            // What was decoded must survive the signer's hand-written JSON unchanged.
            var rewritten = Array(#"{"dispatchTargetId":"#.utf8)
            JSONStringEscaping.appendQuoted(payload.dispatchTargetId, to: &rewritten)
            rewritten += Array(#","requestId":"#.utf8)
            JSONStringEscaping.appendQuoted(payload.requestId, to: &rewritten)
            rewritten += Array(#","creationTimeInEpochMillis":\#(payload.creationTimeInEpochMillis)}"#.utf8)
            guard case .success(let again) = DeviceSignaturePayload.decode(Data(rewritten)) else {
                fuzzCheck(false, "the signer's JSON for a decoded payload does not decode")
                return 0
            }
            fuzzCheck(again.dispatchTargetId.utf8.elementsEqual(payload.dispatchTargetId.utf8)
                      && again.requestId.utf8.elementsEqual(payload.requestId.utf8)
                      && again.creationTimeInEpochMillis == payload.creationTimeInEpochMillis,
                      "payload JSON round trip changed a value")
        case .failure(let rejection):
            fuzzCheck(rejection.code == "MALFORMED_REQUEST" && !rejection.reason.isEmpty, "payload rejection \(rejection)")
        }

    case 2:
        let clock = input.int64()
        let payload = input.rest()
        guard payload.count <= DeviceSignatureLimits.maximumPayloadJSONBytes else { return 0 }
        var signingInput = fixedHeader + [UInt8(ascii: ".")] + Base64.encodeToBytes(payload, alphabet: .url)
        guard let signature = try? signingInput.withUnsafeBytes({ try FuzzKeys.privateKey.signature(message: $0) }) else {
            fuzzCheck(false, "signing failed")
            return 0
        }
        signingInput += [UInt8(ascii: ".")] + Base64.encodeToBytes(signature.rawRepresentation, alphabet: .url)
        let value = String(decoding: signingInput, as: UTF8.self)
        if let verified = verifyTwice(value, clock: clock, lookup: registeredLookup) {
            fuzzCheck(verified.dispatchTargetId == FuzzKeys.dispatchTargetId, "accepted a payload for another dispatch target")
        }

    default:
        let dispatchTargetId = String(decoding: input.shortBytes(), as: UTF8.self)
        let requestId = String(decoding: input.shortBytes(), as: UTF8.self)
        let creationTime = input.int64()
        let signer: DeviceSignatureSigner
        do {
            signer = try DeviceSignatureSigner(key: FuzzKeys.privateKey, dispatchTargetId: dispatchTargetId,
                                               clock: ManualWallClock(millis: creationTime))
        } catch {
            fuzzCheck(DeviceSignatureLimits.dispatchTargetIdProblem(dispatchTargetId) != nil,
                      "the signer refused a valid dispatch target id: \(error)")
            return 0
        }
        fuzzCheck(DeviceSignatureLimits.dispatchTargetIdProblem(dispatchTargetId) == nil, "the signer took an invalid dispatch target id")
        let value: String
        do {
            value = try signer.headerValue(requestId: requestId, creationTimeInEpochMillis: creationTime)
        } catch {
            fuzzCheck(DeviceSignatureLimits.requestIdProblem(requestId) != nil, "the signer refused a valid request id: \(error)")
            return 0
        }
        fuzzCheck(DeviceSignatureLimits.requestIdProblem(requestId) == nil, "the signer took an invalid request id")
        let target = Array(dispatchTargetId.utf8)
        let verified = verifyTwice(value, clock: creationTime) { id in
            id.utf8.elementsEqual(target) ? publicKey : nil
        }
        guard let verified else {
            fuzzCheck(false, "the verifier refused what the signer produced")
            return 0
        }
        fuzzCheck(verified.dispatchTargetId.utf8.elementsEqual(target)
                  && verified.requestId.utf8.elementsEqual(requestId.utf8)
                  && verified.creationTimeMillis == creationTime,
                  "the verifier read other values than the signer wrote")
    }
    return 0
}

func fuzzWarmUp() {
    _ = (registered, publicKey, fixedHeader, codes)
    let payload = Array(#"{"dispatchTargetId":"0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40","requestId":"r","creationTimeInEpochMillis":5}"#.utf8)
    fuzzRun(fuzzDeviceSignature, [2, 5, 0, 0, 0, 0, 0, 0, 0] + payload)
    fuzzRun(fuzzDeviceSignature, [1] + payload)
    fuzzRun(fuzzDeviceSignature, [3, 1, 0x41, 1, 0x42, 5, 0, 0, 0, 0, 0, 0, 0])
    fuzzRun(fuzzDeviceSignature, [0, 0, 0, 0, 0, 0, 0, 0, 0] + Array("e30.e30.AA".utf8))
}

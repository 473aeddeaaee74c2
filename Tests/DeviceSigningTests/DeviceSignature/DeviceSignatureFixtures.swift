import DeviceSigning
import FetchChannelTestSupport
import FetchChannelVectors
import Foundation
import Synchronization
import Testing

/// Shared by the Device-Signature tests: the vector file, the fixture key, small helpers.
enum DeviceSignatureFixtures {
    static func vectorData() throws -> Data {
        try Data(contentsOf: PackageLocations.vectors.appendingPathComponent(DeviceSignatureVectors.fileName))
    }

    static func loadVectors() throws -> DeviceSignatureVectors.File {
        try DeviceSignatureVectors.decode(vectorData())
    }

    /// The RFC 7515 A.3 key, from the vector file (TEST ONLY).
    static func fixtureKey() throws -> P256.Signing.PrivateKey {
        try loadVectors().signingKey()
    }

    static let t0: Int64 = 1_767_225_600_000
    static let target = "0f6a2b54-9a1c-4c3e-8d7f-2b1e5c9a7d40"

    /// A verifier that knows `targets`, all with `key`.
    static func verifier(
        key: P256.Signing.PublicKey, targets: [String] = [target], clock: any WallClock,
        toleranceMillis: Int64 = 60_000, capacity: Int = 100_000,
        quota: Int = DeviceSignatureVerifier.defaultReplayQuotaPerDispatchTarget
    ) throws -> DeviceSignatureVerifier {
        let known = Set(targets)
        return try DeviceSignatureVerifier(
            toleranceMillis: toleranceMillis, clock: clock,
            replayCacheCapacity: capacity, replayQuotaPerDispatchTarget: quota
        ) { id in
            known.contains(id) ? key : nil
        }
    }

    /// A compact JWS over arbitrary header and payload JSON (for malformed inputs), built with
    /// Foundation's base64 and the public signing API only.
    static func jws(header: String, payload: String, key: P256.Signing.PrivateKey) throws -> String {
        let signingInput = base64urlEncode(Data(header.utf8)) + "." + base64urlEncode(Data(payload.utf8))
        let signature = try key.signature(for: Array(signingInput.utf8))
        return signingInput + "." + base64urlEncode(signature.rawRepresentation)
    }

    static func base64urlEncode(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func payloadJSON(target: String = target, requestId: String, creation: String) -> String {
        #"{"dispatchTargetId":"\#(target)","requestId":"\#(requestId)","creationTimeInEpochMillis":\#(creation)}"#
    }

    static func standardHeader(_ kid: String = target) -> String {
        #"{"alg":"ES256","kid":"\#(kid)","typ":"JWT"}"#
    }

    /// Strict-enough base64url decoding for tests (Foundation underneath, not the package's codec).
    static func base64url(_ text: some StringProtocol) -> Data? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }

    /// The three parts of a compact JWS.
    static func parts(_ compact: String) -> [Substring] {
        compact.split(separator: ".", omittingEmptySubsequences: false)
    }

    /// The decoded payload JSON object of a compact JWS.
    static func payloadObject(_ compact: String) throws -> [String: Any] {
        let data = try #require(base64url(parts(compact)[1]))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}

/// Request ids 1, 2, 3, … as strings: a deterministic generator for tests.
final class CountingRequestIds: Sendable {
    private let next = Mutex(0)
    func generate() -> String {
        next.withLock { value in
            value += 1
            return "request-\(value)"
        }
    }
}

import DeviceSigning

/// A registered dispatch target: where the backend sends a device's out-of-band operations and
/// the key that signs the device's requests.
struct DispatchTargetRecord: Sendable {
    let id: String
    let extId: String
    let username: String
    let deviceId: String
    let name: String
    let target: String
    let dispatcher: String
    var signatureKey: P256.Signing.PublicKey
}

/// The operation kinds of the redeem endpoint (`/token/redeem/{kind}`).
enum OperationKind: String, Sendable, CaseIterable {
    case registration
    case authentication
    case deregistration
}

/// An operation the backend holds for a device until it is redeemed or expires.
struct StoredOperation: Sendable {
    let deviceId: String
    let kind: OperationKind
    let creationTimeMillis: Int64
    let expiresAtMillis: Int64
    let channel: String
    let token: String
    let redeemURL: String
    let data: JSONObjectText?
    var redeemed: Bool

    /// The `Op` JSON object of ARCHITECTURE.md.
    var jsonObject: [String: Any] {
        var payload: [String: Any] = [
            "contentType": "application/json",
            "version": "1",
            "redeemData": ["token": token, "redeemUrl": redeemURL],
        ]
        if let data { payload["data"] = data.object }
        return [
            "creationTimeInEpochMillis": creationTimeMillis,
            "dispatchChannel": channel,
            "payload": payload,
            "additionalInformation": ["operation": kind.rawValue, "lifetimeMillis": expiresAtMillis - creationTimeMillis],
        ]
    }
}

/// A JSON value kept as parsed by JSONSerialization, wrapped so it can live in Sendable state.
/// @unchecked: the wrapped value is an immutable property-list tree (NSString, NSNumber, arrays,
/// dictionaries) that is never mutated after parsing.
struct JSONObjectText: @unchecked Sendable {
    let object: Any
}

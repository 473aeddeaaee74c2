import DeviceSigning
import FetchChannelWire
import Foundation

/// A registered dispatch target: where the backend sends a device's out-of-band operations and
/// the key that signs the device's requests, and the key its operations answers are encrypted to
/// (optional: a target registered without one gets plain JSON).
struct DispatchTargetRecord: Sendable {
    let id: String
    let extId: String
    let username: String
    let deviceId: String
    let name: String
    let target: String
    let dispatcher: String
    var signatureKey: P256.Signing.PublicKey
    /// Kept as registered: rotating the signature key does not change it, except that a target
    /// registered without one takes the one its rotation names (`BackendState.updateKeys`).
    var encryptionKey: P256.KeyAgreement.PublicKey?
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
    var redeemed: Bool
    /// The serialized `Op` JSON, made once at dispatch: operations are immutable and listed often.
    let json: [UInt8]

    /// nil when the operation cannot be written as JSON. Only `data` could make it so, and
    /// dispatch refuses such data before; stored as `{}` instead, it would be listed in every
    /// answer of the device as an operation no client reads.
    init?(
        deviceId: String, kind: OperationKind, creationTimeMillis: Int64, expiresAtMillis: Int64, channel: String,
        token: String, redeemURL: String, data: JSONObjectText?
    ) {
        self.deviceId = deviceId
        self.kind = kind
        self.creationTimeMillis = creationTimeMillis
        self.expiresAtMillis = expiresAtMillis
        self.channel = channel
        self.token = token
        self.redeemURL = redeemURL
        self.redeemed = false
        var payload: [String: Any] = [
            "contentType": WireMediaType.json,
            "version": "1",
            "redeemData": ["token": token, "redeemUrl": redeemURL],
        ]
        if let data { payload["data"] = data.object }
        let object: [String: Any] = [
            "creationTimeInEpochMillis": creationTimeMillis,
            "dispatchChannel": channel,
            "payload": payload,
            "additionalInformation": [
                "operation": kind.rawValue, "lifetimeMillis": expiresAtMillis - creationTimeMillis,
            ],
        ]
        // Checked first: JSONSerialization raises rather than throws for some objects on Darwin.
        guard JSONSerialization.isValidJSONObject(object),
            let json = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        else { return nil }
        self.json = Array(json)
    }

    /// The bytes the operation adds to an operations answer: its JSON and a comma
    /// (``OperationsAnswerSize/frameBytes`` takes the first one's back).
    var answerShare: Int { json.count + 1 }

    /// `{"operations":[Op…]}` for a list of operations, from their cached JSON.
    static func answer(_ operations: [StoredOperation]) -> [UInt8] {
        var body = Array(#"{"operations":["#.utf8)
        for (index, operation) in operations.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: operation.json)
        }
        body.append(contentsOf: Array("]}".utf8))
        return body
    }
}

/// A JSON value kept as parsed by JSONSerialization, wrapped so it can live in Sendable state.
/// @unchecked: the wrapped value is an immutable property-list tree (NSString, NSNumber, arrays,
/// dictionaries) that is never mutated after parsing.
struct JSONObjectText: @unchecked Sendable {
    let object: Any
}

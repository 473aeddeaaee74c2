import DeviceSigning
import FetchChannelWire
import Foundation

/// Registering and rotating dispatch targets: the signature and encryption keys a device sends.
extension BackendRouter {
    /// A POST to the collection registers, a PATCH of one target rotates
    /// (``serve(_:_:allow:_:)`` refused any other method).
    func targets(_ request: HTTPRequest, id: String) -> HTTPResponse {
        id.isEmpty ? register(request) : rotate(request, id: id)
    }

    /// The most bytes of a registration's deviceId, username, name, target and dispatcher.
    static let maximumTextBytes = 256

    func register(_ request: HTTPRequest) -> HTTPResponse {
        guard let body = BackendResponses.object(from: request) else {
            return BackendResponses.malformed("The body must be a JSON object.")
        }
        guard let deviceId = body[WireMember.deviceId] as? String, !deviceId.isEmpty,
            deviceId.utf8.count <= Self.maximumTextBytes
        else {
            return BackendResponses.malformed(
                "deviceId must be a non-empty string of at most \(Self.maximumTextBytes) bytes.")
        }
        let key: P256.Signing.PublicKey
        switch Self.signatureKey(in: body) {
        case .success(let parsed): key = parsed
        case .failure(let refusal): return refusal.response
        }
        // Trust on first use: a device's first dispatch target is open; a further one must be
        // signed by one of the device's targets, or anyone could read the device's operations.
        var signer: String?
        switch Self.signatureField(of: request) {
        case .failure(let refusal):
            return refuse(refusal)
        case .success(let header?) where !state.targetIds(ofDevice: deviceId).isEmpty:
            switch verifier.verify(header) {
            case .success(let verified): signer = verified.dispatchTargetId
            case .failure(let rejection): return refuse(.rejected(rejection))
            }
        case .success:
            break  // Unsigned, or the device's first dispatch target: no signature to check.
        }
        var encryptionKey: P256.KeyAgreement.PublicKey?
        if body[WireMember.encryptionKey] != nil {
            switch Self.publicKey(WireMember.encryptionKey, in: body) {
            case .success(let parsed) where parsed.x963Representation == key.x963Representation:
                return BackendResponses.malformed("encryptionKey must not be the signatureKey; send a key of its own.")
            case .success(let parsed): encryptionKey = try? P256.KeyAgreement.PublicKey(jwk: parsed.jwk)
            case .failure(let refusal): return refusal.response
            }
        }
        // The descriptive members: kept per target, so bounded like deviceId; absent or null is "".
        var texts: [String: String] = [:]
        for name in [WireMember.username, WireMember.name, WireMember.target, WireMember.dispatcher] {
            switch body[name] {
            case nil, is NSNull: texts[name] = ""
            case let text as String where text.utf8.count <= Self.maximumTextBytes: texts[name] = text
            default:
                return BackendResponses.malformed("\(name) must be a string of at most \(Self.maximumTextBytes) bytes.")
            }
        }
        let record = DispatchTargetRecord(
            id: UUID().uuidString.lowercased(), extId: UUID().uuidString.lowercased(),
            username: texts[WireMember.username] ?? "", deviceId: deviceId, name: texts[WireMember.name] ?? "",
            target: texts[WireMember.target] ?? "", dispatcher: texts[WireMember.dispatcher] ?? "",
            signatureKey: key, encryptionKey: encryptionKey)
        switch state.register(record, by: .device(signedBy: signer)) {
        case .registered:
            return BackendResponses.json(.created, [WireMember.id: record.id, WireMember.extId: record.extId])
        case .notSignedByTheDevice where signer == nil:
            return refuse(.signatureRequired(deviceId: deviceId))
        case .notSignedByTheDevice:
            return refuse(
                .foreignDispatchTarget(
                    "The Device-Signature is not by a dispatch target of device "
                        + "\(deviceId.prefix(64)); sign with a key of one of its targets."))
        case .full:
            return BackendResponses.error(
                .insufficientStorage, WireErrorCode.tooManyTargets,
                "The emulator holds the most dispatch targets it keeps.")
        }
    }

    func rotate(_ request: HTTPRequest, id: String) -> HTTPResponse {
        // The key the signature is checked with, read first: the new key is stored only while it
        // is still the target's key, so two rotations signed with one old key cannot both succeed
        // (the second, checked before the first was stored, would overwrite its key).
        let checkedKey = state.target(id)?.signatureKey
        let verified: VerifiedDeviceSignature
        switch verifiedSignature(request) {
        case .success(let signature): verified = signature
        case .failure(let refusal): return refuse(refusal)
        }
        guard verified.dispatchTargetId == id else {
            return refuse(
                .foreignDispatchTarget(
                    "The Device-Signature is for another dispatch target; sign with this target's current key."))
        }
        guard let body = BackendResponses.object(from: request) else {
            return BackendResponses.malformed("The body must be a JSON object with signatureKey.")
        }
        let key: P256.Signing.PublicKey
        switch Self.signatureKey(in: body) {
        case .success(let parsed): key = parsed
        case .failure(let refusal): return refusal.response
        }
        // The encryption key is kept as registered: a PATCH may name it unchanged, or name one for
        // a target registered without one (its key was made before encryption keys existed).
        var encryptionKey: P256.KeyAgreement.PublicKey?
        if body[WireMember.encryptionKey] != nil {
            switch Self.publicKey(WireMember.encryptionKey, in: body) {
            case .success(let parsed) where parsed.x963Representation == key.x963Representation:
                return BackendResponses.malformed("encryptionKey must not be the signatureKey; send a key of its own.")
            case .success(let parsed): encryptionKey = try? P256.KeyAgreement.PublicKey(jwk: parsed.jwk)
            case .failure(let refusal): return refusal.response
            }
        }
        switch state.updateKeys(of: id, replacing: checkedKey, signatureKey: key, encryptionKey: encryptionKey) {
        case .updated:
            return BackendResponses.json(.ok, [WireMember.id: id])
        case .unknownTarget:
            return refuse(.rejected(.unknownDispatchTarget(id)))
        case .signatureKeyChanged:
            return refuse(.rejected(.invalidSignature))
        case .sameAsEncryptionKey:
            return BackendResponses.malformed("signatureKey must not be the encryptionKey; send a key of its own.")
        case .encryptionKeyChanged:
            return BackendResponses.malformed("encryptionKey is kept as registered; name it unchanged or omit it.")
        }
    }

    static func signatureKey(in body: [String: Any]) -> Result<P256.Signing.PublicKey, BackendResponses.Refusal> {
        publicKey(WireMember.signatureKey, in: body)
    }

    /// The public P-256 JWK in member `name` of the body, checked to be on the curve. A JWK with
    /// a private `d` is refused: a device sends only its public key, and a client that sent the
    /// private one must hear so rather than have it stored.
    static func publicKey(
        _ name: String,
        in body: [String: Any]
    ) -> Result<P256.Signing.PublicKey, BackendResponses.Refusal> {
        let refusal = { (text: String) in BackendResponses.Refusal(BackendResponses.malformed(text)) }
        guard let jwkObject = body[name] as? [String: Any],
            let jwkData = try? JSONSerialization.data(withJSONObject: jwkObject)
        else {
            return .failure(refusal("\(name) must be a public JWK object."))
        }
        do {
            let key = try JWK(jsonRepresentation: jwkData).publicKey()
            // Read, so `isPublicOnly` is false only for a `d` (not for text it cannot read).
            guard JWK.isPublicOnly(jwkData) else {
                return .failure(
                    refusal(
                        "\(name) holds a private key (d): a device sends only its public key. "
                            + "Treat that key as exposed."))
            }
            return .success(key)
        } catch let error as DeviceSigningError {
            return .failure(refusal("\(name) is not a usable P-256 JWK: \(error.reason)"))
        } catch {
            return .failure(refusal("\(name) is not a usable P-256 JWK."))
        }
    }
}

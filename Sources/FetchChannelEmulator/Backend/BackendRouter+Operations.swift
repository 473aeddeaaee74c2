import DeviceSigning
import FetchChannelWire
import Foundation

/// The pending-operations answer (JSON or JWE by `Accept`) and token redemption.
extension BackendRouter {
    /// A GET or a HEAD (``serve(_:_:allow:_:)`` refused any other method), alike: a HEAD is
    /// signed, verified (its request id spent), counted and faulted as a GET is, and the server
    /// writes its answer without the body.
    func operations(_ request: HTTPRequest, deviceId: String) -> HTTPResponse {
        let verified: VerifiedDeviceSignature
        switch verifiedSignature(request) {
        case .success(let signature): verified = signature
        case .failure(let refusal): return refuse(refusal)
        }
        guard let target = state.target(verified.dispatchTargetId), target.deviceId == deviceId else {
            return refuse(
                .foreignDispatchTarget(
                    "The Device-Signature's dispatch target is not registered for device \(deviceId.prefix(64))."))
        }
        let format = OperationsAnswerFormat.negotiate(
            accept: request.headers.values(for: WireHeader.accept),
            targetHasEncryptionKey: target.encryptionKey != nil)
        let answer = StoredOperation.answer(state.pendingOperations(for: deviceId, nowMillis: clock.nowMillis()))
        switch (format, target.encryptionKey) {
        case (.json, _):
            return HTTPResponse.json(status: HTTPStatus.ok.code, Data(answer))
        case (.jose, let key?):
            return encrypted(answer, to: key)
        case (.jose, nil), (nil, _):
            return BackendResponses.error(
                .notAcceptable, WireErrorCode.notAcceptable,
                "The operations answer is \(WireMediaType.json), or "
                    + "\(WireMediaType.jose) for a dispatch target registered with an encryptionKey; check the Accept header."
            )
        }
    }

    /// `plaintext` as a compact JWE to `key` with the configured algorithms, as `application/jose`.
    func encrypted(_ plaintext: [UInt8], to key: P256.KeyAgreement.PublicKey) -> HTTPResponse {
        do {
            let jwe = try JWE.encrypt(
                plaintext, to: key, algorithm: configuration.jweAlgorithm,
                encryption: configuration.jweEncryption)
            return HTTPResponse(
                status: HTTPStatus.ok.code, headers: [WireHeader.contentType: OperationsAnswerFormat.joseContentType],
                body: Array(jwe.utf8))
        } catch {
            return BackendResponses.error(
                .internalServerError, WireErrorCode.encryptionFailed, "The emulator could not encrypt the answer.")
        }
    }

    /// The `undecryptable` fault's answer: an empty operations list encrypted to a fresh key that
    /// nobody holds.
    func undecryptableAnswer() -> HTTPResponse {
        guard let stranger = try? P256.KeyAgreement.PrivateKey() else {
            return BackendResponses.error(
                .internalServerError, WireErrorCode.encryptionFailed, "The emulator could not make a key.")
        }
        return encrypted(StoredOperation.answer([]), to: stranger.publicKey)
    }

    // MARK: Redemption

    /// A POST (``serve(_:_:allow:_:)`` refused any other method).
    func redeem(_ request: HTTPRequest, kind: OperationKind) -> HTTPResponse {
        guard let body = BackendResponses.object(from: request), let token = body["token"] as? String, !token.isEmpty
        else {
            return BackendResponses.malformed("The body must be {\"token\": \"…\"}.")
        }
        switch state.redeem(token: token, kind: kind, nowMillis: clock.nowMillis()) {
        case .redeemed(let lifetime, let kind):
            let op =
                ["registration": "Reg", "authentication": "Auth", "deregistration": "Dereg"][kind.rawValue] ?? "Auth"
            let uafRequest =
                #"[{"header":{"upv":{"major":1,"minor":1},"op":"\#(op)","appID":"emulator"},"challenge":"\#(BackendResponses.randomIdentifier())"}]"#
            return BackendResponses.json(
                .ok, ["statusCode": 1200, "uafRequest": uafRequest, "op": op, "lifetimeMillis": lifetime])
        case .alreadyRedeemed:
            return BackendResponses.error(
                .gone, WireErrorCode.tokenAlreadyRedeemed,
                "This token was redeemed before; every operation is redeemed once.")
        case .expired:
            return BackendResponses.error(
                .gone, WireErrorCode.tokenExpired, "The operation's lifetime is over; start a new operation.")
        case .unknownToken:
            return BackendResponses.error(.badRequest, WireErrorCode.unknownToken, "No operation has this token.")
        case .wrongKind:
            return BackendResponses.malformed(
                "The token belongs to another operation kind; use the redeemUrl of the operation.")
        }
    }
}

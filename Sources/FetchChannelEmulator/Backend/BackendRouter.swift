import DeviceSigning
import FetchChannelWire
import Foundation

/// Turns each HTTP request into the emulated backend's answer: the device endpoints of
/// docs/ARCHITECTURE.md ("Wire contract") under the configured base
/// path, and the loopback-only control API under `/_emulator/`.
///
/// Before any route: a request must be addressed to a loopback host (else 421), and a request
/// body on a route must be `application/json` (else 415), so that a web page can neither reach
/// the emulator through DNS rebinding nor post to it cross-site without a CORS preflight.
struct BackendRouter: Sendable {
    let configuration: ReferenceBackend.Configuration
    let state: BackendState
    let clock: ServerClock
    let verifier: DeviceSignatureVerifier
    /// The server's base URL, known once it is bound (for the redeem URLs it hands out).
    let baseURL: Locked<String>
    /// The last creation time handed out: operations get strictly increasing times, so their order
    /// is the dispatch order even within one millisecond.
    let lastCreationMillis = Locked(Int64.min)

    func handle(_ request: HTTPRequest) -> HTTPServerAction {
        guard HTTPAuthority.namesOnlyLoopback(request) else {
            return .respond(
                BackendResponses.error(
                    .misdirectedRequest, WireErrorCode.misdirectedRequest,
                    "The emulator answers requests "
                        + "addressed to localhost, 127.0.0.0/8 or [::1] only; check the Host header."))
        }
        let path = request.path
        if path == WirePaths.Emulator.root || path.hasPrefix(WirePaths.Emulator.root + "/") {
            guard request.peer.isLoopback else {
                return .respond(
                    BackendResponses.error(
                        .forbidden, WireErrorCode.forbidden, "The emulator control API answers loopback clients only."))
            }
            return .respond(BackendResponses.unsupportedMediaType(request) ?? control(request))
        }
        let base = configuration.basePath
        if let id = remainder(of: path, after: base + WirePaths.dispatchTargets) {
            return serve(.targets, request) { targets(request, id: id) }
        }
        if let deviceId = remainder(of: path, after: base + WirePaths.pendingOperations), !deviceId.isEmpty {
            return serve(.operations, request) { operations(request, deviceId: deviceId) }
        }
        if let kind = remainder(of: path, after: base + WirePaths.redeem), !kind.isEmpty {
            return serve(.redeem, request) { redeem(request, kindText: kind) }
        }
        return .respond(BackendResponses.notFound)
    }

    /// "" for `prefix` itself, the single path segment after `prefix/`, or nil.
    private func remainder(of path: String, after prefix: String) -> String? {
        if path == prefix { return "" }
        guard path.hasPrefix(prefix + "/") else { return nil }
        let rest = path.dropFirst(prefix.count + 1)
        guard !rest.contains("/") else { return nil }
        return String(rest).removingPercentEncoding ?? String(rest)
    }

    // MARK: Faults

    /// Refuses a body that is not JSON, then counts the request and applies an injected fault.
    /// Faults that replace the answer (status, garbage, oversized, close, undecryptable) skip the request's
    /// processing, so it has no effect; delay, hang and wrong-content-type process it and then
    /// disturb the answer.
    private func serve(
        _ endpoint: EmulatorEndpoint, _ request: HTTPRequest,
        _ process: () -> HTTPResponse
    ) -> HTTPServerAction {
        if let refusal = BackendResponses.unsupportedMediaType(request) { return .respond(refusal) }
        guard let fault = state.recordRequest(to: endpoint) else { return .respond(process()) }
        switch fault.kind {
        case .delay:
            return .respondAfter(delayMillis: Int(((fault.seconds ?? 0) * 1000).rounded()), process())
        case .status:
            let status = fault.status ?? 500
            return .respond(
                BackendResponses.error(
                    HTTPStatus(status), WireErrorCode.injectedFault, "The emulator was told to answer \(status)."))
        case .garbage:
            return .respond(HTTPResponse.json(status: HTTPStatus.ok.code, Data("<html>\u{0}\u{7f}not json".utf8)))
        case .oversized:
            var body = Array(#"{"operations":["#.utf8)
            body.append(contentsOf: repeatElement(UInt8(ascii: " "), count: (1 << 20) + 1024))
            body.append(contentsOf: Array("]}".utf8))
            return .respond(
                HTTPResponse(
                    status: HTTPStatus.ok.code, headers: [WireHeader.contentType: WireMediaType.json], body: body))
        case .close:
            return .closeWithoutAnswer
        case .hang:
            return .respondThenHang(process())
        case .wrongContentType:
            var response = process()
            response.headers.replaceOrAdd(name: WireHeader.contentType, value: "text/html")
            return .respond(response)
        case .undecryptable:
            return .respond(undecryptableAnswer())
        }
    }

    // MARK: Device signature

    /// The request's one Device-Signature field, verified.
    private func verifiedSignature(_ request: HTTPRequest) -> Result<VerifiedDeviceSignature, DeviceRequestRefusal> {
        switch Self.signatureField(of: request) {
        case .success(let header?): return verifier.verify(header).mapError(DeviceRequestRefusal.rejected)
        case .success(nil): return .failure(.malformedHeader("The request has no Device-Signature header."))
        case .failure(let refusal): return .failure(refusal)
        }
    }

    /// The value of the Device-Signature field, nil without one; more than one field is malformed,
    /// whatever the letter case of their names (docs/docs/ARCHITECTURE.md, "Invariants").
    private static func signatureField(of request: HTTPRequest) -> Result<String?, DeviceRequestRefusal> {
        let fields = request.headers.values(for: WireHeader.deviceSignature)
        guard fields.count <= 1 else {
            return .failure(.malformedHeader("The request has \(fields.count) Device-Signature fields; send one."))
        }
        return .success(fields.first)
    }

    /// The answer to a refused device request; the statistics count its internal code.
    private func refuse(_ refusal: DeviceRequestRefusal) -> HTTPResponse {
        state.recordRejection(code: refusal.code)
        return refusal.response
    }

    // MARK: Dispatch targets

    private func targets(_ request: HTTPRequest, id: String) -> HTTPResponse {
        switch (request.method, id.isEmpty) {
        case ("POST", true): return register(request)
        case ("PATCH", false): return rotate(request, id: id)
        case (_, true): return BackendResponses.methodNotAllowed(allow: ["POST"])
        case (_, false): return BackendResponses.methodNotAllowed(allow: ["PATCH"])
        }
    }

    private func register(_ request: HTTPRequest) -> HTTPResponse {
        guard let body = BackendResponses.object(from: request) else {
            return BackendResponses.malformed("The body must be a JSON object.")
        }
        guard let deviceId = body["deviceId"] as? String, !deviceId.isEmpty, deviceId.utf8.count <= 256 else {
            return BackendResponses.malformed("deviceId must be a non-empty string of at most 256 bytes.")
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
        if body["encryptionKey"] != nil {
            switch Self.publicKey("encryptionKey", in: body) {
            case .success(let parsed) where parsed.x963Representation == key.x963Representation:
                return BackendResponses.malformed("encryptionKey must not be the signatureKey; send a key of its own.")
            case .success(let parsed): encryptionKey = try? P256.KeyAgreement.PublicKey(jwk: parsed.jwk)
            case .failure(let refusal): return refusal.response
            }
        }
        let optional = { (name: String) -> String in (body[name] as? String) ?? "" }
        let record = DispatchTargetRecord(
            id: UUID().uuidString.lowercased(), extId: UUID().uuidString.lowercased(),
            username: optional("username"), deviceId: deviceId, name: optional("name"),
            target: optional("target"), dispatcher: optional("dispatcher"),
            signatureKey: key, encryptionKey: encryptionKey)
        switch state.register(record, by: .device(signedBy: signer)) {
        case .registered:
            return BackendResponses.json(.created, ["id": record.id, "extId": record.extId])
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

    private func rotate(_ request: HTTPRequest, id: String) -> HTTPResponse {
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
        // The encryption key is kept as registered: a PATCH may name it, but only unchanged.
        if body["encryptionKey"] != nil {
            switch Self.publicKey("encryptionKey", in: body) {
            case .success(let named)
            where named.x963Representation == state.target(id)?.encryptionKey?.x963Representation:
                break
            case .success:
                return BackendResponses.malformed("encryptionKey is kept as registered; name it unchanged or omit it.")
            case .failure(let refusal):
                return refusal.response
            }
        }
        switch Self.signatureKey(in: body) {
        case .success(let key):
            guard state.updateKey(of: id, to: key) else {
                return refuse(.rejected(.unknownDispatchTarget(id)))
            }
            return BackendResponses.json(.ok, ["id": id])
        case .failure(let refusal):
            return refusal.response
        }
    }

    private static func signatureKey(in body: [String: Any]) -> Result<P256.Signing.PublicKey, BackendResponses.Refusal>
    {
        publicKey("signatureKey", in: body)
    }

    /// The public P-256 JWK in member `name` of the body, checked to be on the curve.
    private static func publicKey(
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
            return .success(try JWK(jsonRepresentation: jwkData).publicKey())
        } catch let error as DeviceSigningError {
            return .failure(refusal("\(name) is not a usable P-256 JWK: \(error.reason)"))
        } catch {
            return .failure(refusal("\(name) is not a usable P-256 JWK."))
        }
    }

    // MARK: Operations

    private func operations(_ request: HTTPRequest, deviceId: String) -> HTTPResponse {
        guard request.method == "GET" else { return BackendResponses.methodNotAllowed(allow: ["GET"]) }
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
    private func encrypted(_ plaintext: [UInt8], to key: P256.KeyAgreement.PublicKey) -> HTTPResponse {
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
    private func undecryptableAnswer() -> HTTPResponse {
        guard let stranger = try? P256.KeyAgreement.PrivateKey() else {
            return BackendResponses.error(
                .internalServerError, WireErrorCode.encryptionFailed, "The emulator could not make a key.")
        }
        return encrypted(StoredOperation.answer([]), to: stranger.publicKey)
    }

    // MARK: Redemption

    private func redeem(_ request: HTTPRequest, kindText: String) -> HTTPResponse {
        guard let kind = OperationKind(rawValue: kindText) else { return BackendResponses.notFound }
        guard request.method == "POST" else { return BackendResponses.methodNotAllowed(allow: ["POST"]) }
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

    // MARK: Control API

    private func control(_ request: HTTPRequest) -> HTTPResponse {
        switch (request.method, request.path) {
        case ("POST", WirePaths.Emulator.dispatch):
            guard let body = BackendResponses.object(from: request) else {
                return BackendResponses.malformed("The body must be a JSON object.")
            }
            switch dispatch(body) {
            case .success(let operation):
                return HTTPResponse.json(status: HTTPStatus.created.code, Data(operation.json))
            case .failure(let refusal): return refusal.response
            }
        case ("POST", WirePaths.Emulator.clock):
            guard let body = BackendResponses.object(from: request),
                let seconds = (body["offsetSeconds"] as? NSNumber)?.doubleValue,
                seconds.isFinite, abs(seconds) <= 10 * 365 * 86_400
            else {
                return BackendResponses.malformed(
                    "The body must be {\"offsetSeconds\": number} (at most ten years either way).")
            }
            clock.offsetMillis = Int64((seconds * 1000).rounded())
            return BackendResponses.json(.ok, ["offsetSeconds": seconds])
        case ("POST", WirePaths.Emulator.faults):
            guard let body = BackendResponses.object(from: request) else {
                return BackendResponses.malformed("The body must be a JSON object.")
            }
            guard let endpoint = (body["endpoint"] as? String).flatMap(EmulatorEndpoint.init(rawValue:)),
                let kind = (body["kind"] as? String).flatMap(EmulatorFault.Kind.init(rawValue:))
            else {
                let endpoints = EmulatorEndpoint.allCases.map(\.rawValue).joined(separator: ", ")
                let kinds = EmulatorFault.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                return BackendResponses.malformed("endpoint must be one of \(endpoints); kind one of \(kinds).")
            }
            let fault = EmulatorFault(
                endpoint: endpoint, kind: kind, seconds: (body["seconds"] as? NSNumber)?.doubleValue,
                status: (body["status"] as? NSNumber)?.intValue, count: (body["count"] as? NSNumber)?.intValue)
            if let problem = fault.validationProblem() { return BackendResponses.malformed(problem) }
            state.addFault(fault)
            return BackendResponses.json(.ok, [:])
        case ("DELETE", WirePaths.Emulator.faults):
            state.clearFaults()
            return BackendResponses.json(.ok, [:])
        case ("GET", WirePaths.Emulator.stats):
            let statistics = state.statistics
            return BackendResponses.json(
                .ok,
                [
                    "requests": statistics.requests, "redemptions": statistics.redemptions,
                    "rejections": statistics.rejections,
                ])
        case (_, WirePaths.Emulator.dispatch), (_, WirePaths.Emulator.clock):
            return BackendResponses.methodNotAllowed(allow: ["POST"])
        case (_, WirePaths.Emulator.faults):
            return BackendResponses.methodNotAllowed(allow: ["POST", "DELETE"])
        case (_, WirePaths.Emulator.stats):
            return BackendResponses.methodNotAllowed(allow: ["GET"])
        default:
            return BackendResponses.notFound
        }
    }

    /// Creates an operation for a device (control API and in-process control share this).
    func dispatch(_ body: [String: Any]) -> Result<StoredOperation, BackendResponses.Refusal> {
        guard let deviceId = body["deviceId"] as? String, !deviceId.isEmpty, deviceId.utf8.count <= 256 else {
            return .failure(
                BackendResponses.Refusal(
                    BackendResponses.malformed("deviceId must be a non-empty string of at most 256 bytes.")))
        }
        guard let channel = body["channel"] as? String, !channel.isEmpty, channel.utf8.count <= 64 else {
            return .failure(
                BackendResponses.Refusal(
                    BackendResponses.malformed(
                        "channel must be a non-empty string (firebase-cloud-messaging, png-qr-code, link, or any other)."
                    )))
        }
        let lifetimeSeconds =
            (body["lifetimeSeconds"] as? NSNumber)?.doubleValue ?? configuration.defaultLifetimeSeconds
        guard lifetimeSeconds.isFinite, lifetimeSeconds > 0, lifetimeSeconds <= 30 * 86_400 else {
            return .failure(
                BackendResponses.Refusal(BackendResponses.malformed("lifetimeSeconds must be in (0, 2592000].")))
        }
        let kindText = (body["operation"] as? String) ?? OperationKind.authentication.rawValue
        guard let kind = OperationKind(rawValue: kindText) else {
            return .failure(
                BackendResponses.Refusal(
                    BackendResponses.malformed("operation must be registration, authentication or deregistration.")))
        }
        let data = body["data"].map(JSONObjectText.init(object:))
        let now = lastCreationMillis.withLock { last in
            last = Swift.max(clock.nowMillis(), last == .max ? last : last + 1)
            return last
        }
        let token = BackendResponses.randomIdentifier()
        let operation = StoredOperation(
            deviceId: deviceId, kind: kind, creationTimeMillis: now,
            expiresAtMillis: now + Int64((lifetimeSeconds * 1000).rounded()),
            channel: channel, token: token,
            redeemURL: baseURL.withLock { $0 } + configuration.basePath + WirePaths.redeem + "/" + kind.rawValue,
            data: data)
        guard state.add(operation, nowMillis: now) else {
            return .failure(
                BackendResponses.Refusal(
                    BackendResponses.error(
                        .insufficientStorage, WireErrorCode.tooManyOperations,
                        "The emulator holds the most operations it keeps.")))
        }
        return .success(operation)
    }
}

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
    /// The server's base URL, known once it is bound (for the redeem URLs it hands out); set
    /// before the server accepts its first connection, and while it is empty a dispatch is
    /// refused (503 `NOT_STARTED`).
    let baseURL: Locked<String>
    /// The last creation time handed out: operations get strictly increasing times, so their order
    /// is the dispatch order even within one millisecond. Reset when the clock is set
    /// (``setClockOffset(millis:)``).
    let lastCreationMillis = Locked(Int64.min)

    /// Sets the clock's offset. Operations dispatched after it get times of the clock as set:
    /// moved back, the clock is not held at the latest time handed out before. Set to another
    /// offset, the verifier forgets the request ids it has seen
    /// (``DeviceSignatureVerifier/forgetRequestIds()``): kept, those of the old time refused every
    /// request of a clock set back as replayed. The same offset again keeps them.
    func setClockOffset(millis: Int64) {
        lastCreationMillis.withLock { last in
            if clock.offsetMillis != millis { verifier.forgetRequestIds() }
            clock.offsetMillis = millis
            last = .min
        }
    }

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
            return serve(.targets, request, allow: id.isEmpty ? ["POST"] : ["PATCH"]) { targets(request, id: id) }
        }
        if let deviceId = remainder(of: path, after: base + WirePaths.pendingOperations), !deviceId.isEmpty {
            return serve(.operations, request, allow: Self.readMethods) { operations(request, deviceId: deviceId) }
        }
        if let kindText = remainder(of: path, after: base + WirePaths.redeem), !kindText.isEmpty {
            // An unknown kind names no endpoint: 404, neither counted nor faulted.
            guard let kind = OperationKind(rawValue: kindText) else { return .respond(BackendResponses.notFound) }
            return serve(.redeem, request, allow: ["POST"]) { redeem(request, kind: kind) }
        }
        return .respond(BackendResponses.notFound)
    }

    /// The methods of a resource read with GET: HEAD too, wherever GET is (RFC 9110 §9.1), answered
    /// as GET is, the same checks, effects and headers (`Content-Length` of the GET's body
    /// included), without the body; the server leaves the body out (``HTTPResponseSerializer``).
    static let readMethods = ["GET", "HEAD"]

    /// "" for `prefix` itself, the single non-empty path segment after `prefix/`, or nil: `prefix/`
    /// names no resource (neither the collection nor one of its members).
    func remainder(of path: String, after prefix: String) -> String? {
        if path == prefix { return "" }
        guard path.hasPrefix(prefix + "/") else { return nil }
        let rest = path.dropFirst(prefix.count + 1)
        guard !rest.isEmpty, !rest.contains("/") else { return nil }
        return String(rest).removingPercentEncoding ?? String(rest)
    }

    // MARK: Faults

    /// Refuses a body that is not JSON and a method not in `allow` (405), then counts the request
    /// and applies an injected fault: a request the endpoint does not take neither counts nor
    /// uses up a fault meant for one it does.
    /// Faults that replace the answer (status, garbage, oversized, close, undecryptable) skip the request's
    /// processing, so it has no effect; delay, hang and wrong-content-type process it and then
    /// disturb the answer. Without a fault, a test's ``AnswerHold`` may hold the processed answer.
    func serve(
        _ endpoint: EmulatorEndpoint, _ request: HTTPRequest, allow: [String],
        _ process: () -> HTTPResponse
    ) -> HTTPServerAction {
        if let refusal = BackendResponses.unsupportedMediaType(request) { return .respond(refusal) }
        guard allow.contains(request.method) else { return .respond(BackendResponses.methodNotAllowed(allow: allow)) }
        guard let fault = state.recordRequest(to: endpoint) else {
            guard let hold = state.takeHold(for: endpoint) else { return .respond(process()) }
            let response = process()
            hold.holdAnswer()
            return .respond(response)
        }
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
    func verifiedSignature(_ request: HTTPRequest) -> Result<VerifiedDeviceSignature, DeviceRequestRefusal> {
        switch Self.signatureField(of: request) {
        case .success(let header?): return verifier.verify(header).mapError(DeviceRequestRefusal.rejected)
        case .success(nil): return .failure(.malformedHeader("The request has no Device-Signature header."))
        case .failure(let refusal): return .failure(refusal)
        }
    }

    /// The value of the Device-Signature field, nil without one; more than one field is malformed,
    /// whatever the letter case of their names (docs/ARCHITECTURE.md, "Invariants").
    static func signatureField(of request: HTTPRequest) -> Result<String?, DeviceRequestRefusal> {
        let fields = request.headers.values(for: WireHeader.deviceSignature)
        guard fields.count <= 1 else {
            return .failure(.malformedHeader("The request has \(fields.count) Device-Signature fields; send one."))
        }
        return .success(fields.first)
    }

    /// The answer to a refused device request; the statistics count its internal code.
    func refuse(_ refusal: DeviceRequestRefusal) -> HTTPResponse {
        state.recordRejection(code: refusal.code.rawValue)
        return refusal.response
    }
}

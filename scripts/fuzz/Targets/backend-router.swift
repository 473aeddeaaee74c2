// Fuzz target `backend-router`: the reference backend's router (`BackendRouter.handle`) behind the
// emulator's HTTP request parser, as one loopback client reaches it on one connection.
//
// Input: the bytes a client sends on one connection. They are parsed with the server's limits
// (`HTTPServer.Limits()`, the body capped at `ReferenceBackend.maximumRequestBodyBytes`, as
// ReferenceBackend sets them), and up to 16 requests go in order, from peer 127.0.0.1, to one
// router built for the input the way ReferenceBackend builds one: fresh state, with small bounds
// (operations, pending operations per device, dispatch targets, replay cache) so that each is
// reachable; a manual clock standing at the vectors' time (Vectors/device-signature.json), so that
// runs repeat; and the vectors' two dispatch targets registered with the fixture key (the first for
// device `fuzz-device-1`, with the RFC 7520 §5.5 recipient key as its encryption key; the second
// for `fuzz-device-2`). Two stand-ins let the input use what the backend makes up: a
// `Device-Signature` field whose value is `~` and one character becomes a fresh signature by the
// fixture key for the dispatch target that character picks ("~0" the first: the vectors' two, then
// those the input registered), made at the device's clock (the manual clock without the server's
// offset), for signed requests the vectors cannot make (rotations, further targets); and `"~X"` in
// a body becomes the JSON string of the token of the dispatch X picks, in dispatch order (for
// redemptions). The connection ends where the server ends it: a parse failure, `Connection:
// close`, a `close` or `hang` fault. An action that would wait (a `delay` or `hang` fault) is
// inspected, never waited on; the test-only answer holds (`AnswerHold`) are never set.
//
// Checks, besides "no crash", after every request:
// - the answer has a status in 200...599 (HTTPResponse: a handler sends no 1xx) and is written by
//   `HTTPResponseSerializer` as it is (`HTTP/1.1 <status> `, its body last), not replaced by a 500;
//   a `delay` fault's wait is 0...3600 s (EmulatorFault);
// - an answer of 400 or more is `{errorCode, message}` with a `WireErrorCode` (BackendResponses,
//   docs/ARCHITECTURE.md "Wire contract"), except the bodiless 404 of no route and 405 (with
//   `Allow`); 401 `CLOCK_SKEW_TOO_BIG` carries `serverTimeInEpochMillis`, 429 `Retry-After`;
//   while no fault is injected, every `application/json` answer is JSON;
// - pending operations change only by a dispatch (201: its token is added to its device's) and
//   a redemption (200: its token, pending before, is gone); a fetch, a registration, a rotation,
//   a refused or faulted request change none (after a clock set, only operations dispatched and
//   not redeemed are pending); a device's dispatch targets change only by a registration (201:
//   one new id), a further one only when signed by one of the device's targets; a target's keys
//   only by a rotation (200) signed by that target; every successful signed request is signed by
//   a target holding the fixture key, the only key the input can sign with;
// - the bounds (BackendState, DeviceOperations): after a dispatch its device has at most
//   `pendingCapacityPerDevice` operations pending at the server clock's time, with an answer within
//   `OperationsAnswerSize.maximumJSONBytes`; the store holds at most `operationCapacity`
//   operations (counted from the dispatches answered 201, dropping what a purge drops: expired
//   over an hour, when the store is full or its device's operations are read, which every
//   request's snapshot does for every known device); at most `targetCapacity` dispatch targets;
//   dispatches get strictly increasing creation times until the clock is set;
// - a fetch answered 200 (no fault injected) lists exactly the device's pending operations in
//   order (decrypted with the recipient key when it is JOSE), for a signature of a target of
//   that device; a redemption answered 200 is the token's first, of the kind it was dispatched
//   with, with its lifetime; the statistics count each request and refusal at most once, and
//   every redeemed token once.

import Foundation

@testable import DeviceSigning
@testable import FetchChannelEmulator
@testable import FetchChannelWire

private enum RouterFuzz {
    /// The vectors' verifier time (Vectors/device-signature.json): their signatures are fresh at it.
    static let startMillis: Int64 = 1_767_225_600_000
    static let baseURL = "http://127.0.0.1:8080"
    static let peer = HTTPPeerAddress(host: "127.0.0.1", port: 40_000)
    static let maximumRequests = 16
    static let operationCapacity = 6
    static let pendingCapacityPerDevice = 3
    static let targetCapacity = 5
    static let replayCacheCapacity = 6
    static let replayQuota = 3
    /// The server's limits, with the body limit ReferenceBackend sets.
    static let limits: HTTPServer.Limits = {
        var limits = HTTPServer.Limits()
        limits.maxBodyBytes = min(limits.maxBodyBytes, ReferenceBackend.maximumRequestBodyBytes)
        return limits
    }()
    /// Vectors/device-signature.json `verifier.dispatchTargets`, each with a device of its own.
    static let vectorTargets: [(id: String, deviceId: String)] = [
        (FuzzKeys.dispatchTargetId, "fuzz-device-1"),
        ("target \"quoted\" \\ back/slash \u{e9} \u{1F511}", "fuzz-device-2"),
    ]
    /// RFC 7520 §5.5's recipient (Vectors/jwe-ecdh-es.json `rfc7520-meriadoc`). Published, TEST ONLY.
    static let decryptionKey: P256.KeyAgreement.PrivateKey = {
        guard let d = Base64.decode("r_kHyZ-a06rmxM3yESK84r1otSg-aQcVStkRhA-iCM8", alphabet: .url),
            let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: d)
        else { fatalError("the fixed decryption key does not load") }
        return key
    }()
    static let fixtureKey = Data(FuzzKeys.publicKey.x963Representation)
    static let recipientKey = Data(decryptionKey.publicKey.x963Representation)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBackendRouter(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var parser = HTTPRequestParser(limits: RouterFuzz.limits, peer: RouterFuzz.peer)
    parser.append(fuzzBytes(data, size))
    var session = RouterSession()
    for _ in 0..<RouterFuzz.maximumRequests {
        guard case .request(let request) = parser.next() else { break }
        guard session.serve(request) else { break }
    }
    return 0
}

/// One operation as its dispatch answer described it.
private struct Dispatched {
    let deviceId: String
    let kind: String
    let creationMillis: Int64
    let lifetimeMillis: Int64
    let expiresAtMillis: Int64
    var redeemed = false
}

/// What the backend holds, as far as the target can see it.
private struct Snapshot: Equatable {
    /// Pending tokens per known device, in the backend's order.
    var pending: [String: [String]] = [:]
    /// Dispatch target ids per known device.
    var targets: [String: Set<String>] = [:]
    /// The signature and encryption keys (X9.63) per known target id.
    var keys: [String: [Data]] = [:]
}

private struct RouterSession {
    let deviceClock: ManualWallClock
    let clock: ServerClock
    let state: BackendState
    let router: BackendRouter

    /// The targets a `~` signature can name: the vectors', then those registered (201) in order.
    var signableTargets = RouterFuzz.vectorTargets.map(\.id)
    var targetCount = RouterFuzz.vectorTargets.count
    var knownDevices = Set(RouterFuzz.vectorTargets.map(\.deviceId))
    /// Every operation dispatched (201) and not purged (BackendState.purge's rule, which a read
    /// of the device's pending operations applies to the device), by token.
    var stored: [String: Dispatched] = [:]
    /// The tokens of the dispatches answered 201, in order.
    var dispatchedTokens: [String] = []
    var redeemedTokens = Set<String>()
    var faultsMayBeActive = false
    var lastCreationMillis = Int64.min
    var signatures = 0
    var statistics: EmulatorStatistics

    init() {
        let deviceClock = ManualWallClock(millis: RouterFuzz.startMillis)
        let clock = ServerClock(base: deviceClock, offsetMillis: 0)
        let state = BackendState(
            operationCapacity: RouterFuzz.operationCapacity,
            pendingCapacityPerDevice: RouterFuzz.pendingCapacityPerDevice,
            targetCapacity: RouterFuzz.targetCapacity)
        let configuration = ReferenceBackend.Configuration(
            clock: deviceClock, replayCacheCapacity: RouterFuzz.replayCacheCapacity,
            replayQuotaPerDispatchTarget: RouterFuzz.replayQuota,
            pendingOperationsPerDevice: RouterFuzz.pendingCapacityPerDevice)
        guard
            let verifier = try? DeviceSignatureVerifier(
                toleranceMillis: configuration.toleranceMillis, clock: clock,
                replayCacheCapacity: configuration.replayCacheCapacity,
                replayQuotaPerDispatchTarget: configuration.replayQuotaPerDispatchTarget,
                keyLookup: { state.target($0)?.signatureKey })
        else { fatalError("the verifier does not start") }
        let router = BackendRouter(
            configuration: configuration, state: state, clock: clock, verifier: verifier,
            baseURL: Locked(RouterFuzz.baseURL))
        for (index, target) in RouterFuzz.vectorTargets.enumerated() {
            let record = DispatchTargetRecord(
                id: target.id, extId: "ext-\(index)", username: "fuzz", deviceId: target.deviceId, name: "fuzz",
                target: "emulator", dispatcher: "emulator", signatureKey: FuzzKeys.publicKey,
                encryptionKey: index == 0 ? RouterFuzz.decryptionKey.publicKey : nil)
            fuzzCheck(state.register(record, by: .control) == .registered, "a vectors' target was not registered")
        }
        self.deviceClock = deviceClock
        self.clock = clock
        self.state = state
        self.router = router
        statistics = state.statistics
    }

    /// Hands `request` to the router and checks what it did; false when the connection ends.
    mutating func serve(_ incoming: HTTPRequest) -> Bool {
        let request = withTokensSpliced(withSignaturesMade(incoming))
        let route = Route(request, basePath: router.configuration.basePath, router: router)
        let body = jsonObject(request.body)
        if let deviceId = body?["deviceId"] as? String { knownDevices.insert(deviceId) }
        if let deviceId = route.pathDeviceId { knownDevices.insert(deviceId) }
        let before = snapshot()
        dropPurgeable()

        let action = router.handle(request)
        let response: HTTPResponse?
        var ends = false
        switch action {
        case .respond(let answer):
            response = answer
        case .respondAfter(let delayMillis, let answer):
            fuzzCheck((0...3_600_000).contains(delayMillis), "a delay of \(delayMillis) ms")
            response = answer
        case .closeWithoutAnswer:
            response = nil
            ends = true
        case .respondThenHang(let answer):
            response = answer
            ends = true
        case .rawBytes(_, let thenClose):
            response = nil
            ends = thenClose
        }
        let after = snapshot()
        let answer = response.map { Answer($0) }
        if let response {
            checkWritten(response, to: request, hangs: ends)
            if let answer { checkShape(answer) }
        }
        checkOperations(request, route, body, answer, before: before, after: after)
        checkTargets(request, route, body, answer, before: before, after: after)
        checkFetch(request, route, answer, after: after)
        checkStatistics()
        dropPurgeable()
        if let response, HTTPResponseSerializer.asksToClose(response) { ends = true }
        return !ends && !request.wantsConnectionClose
    }

    // MARK: Signatures

    /// The request with each `~X` Device-Signature replaced by a fresh one of the fixture key.
    mutating func withSignaturesMade(_ request: HTTPRequest) -> HTTPRequest {
        guard request.headers.contains(WireHeader.deviceSignature) else { return request }
        var fields: [(String, String)] = []
        for field in request.headers {
            var value = field.value
            if HTTPHeaders.namesEqual(field.name, WireHeader.deviceSignature), value.utf8.count == 2,
                value.utf8.first == UInt8(ascii: "~"), let pick = value.utf8.last
            {
                let id = signableTargets[picked(pick, of: signableTargets.count)]
                signatures += 1
                if let signer = try? DeviceSignatureSigner(
                    key: FuzzKeys.privateKey, dispatchTargetId: id, clock: deviceClock),
                    let made = try? signer.headerValue(
                        requestId: "fuzz-\(signatures)", creationTimeInEpochMillis: deviceClock.nowMillis())
                {
                    value = made
                }
            }
            fields.append((field.name, value))
        }
        var request = request
        request.headers = HTTPHeaders(fields)
        return request
    }

    /// The request with each `"~X"` in its body replaced by the JSON string of a dispatched token.
    func withTokensSpliced(_ request: HTTPRequest) -> HTTPRequest {
        guard !dispatchedTokens.isEmpty, request.body.count >= 4 else { return request }
        let quote = UInt8(ascii: "\"")
        let tilde = UInt8(ascii: "~")
        var body: [UInt8] = []
        var index = 0
        let bytes = request.body
        while index < bytes.count {
            if index + 3 < bytes.count, bytes[index] == quote, bytes[index + 1] == tilde, bytes[index + 3] == quote {
                let token = dispatchedTokens[picked(bytes[index + 2], of: dispatchedTokens.count)]
                body += [quote] + Array(token.utf8) + [quote]
                index += 4
            } else {
                body.append(bytes[index])
                index += 1
            }
        }
        var request = request
        request.body = body
        return request
    }

    /// The dispatch target id the request's one Device-Signature names in its payload, or nil.
    func signer(of request: HTTPRequest) -> String? {
        let values = request.headers.values(for: WireHeader.deviceSignature)
        guard values.count == 1 else { return nil }
        let parts = values[0].split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64.decode(String(parts[1]), alphabet: .url),
            case .object(let members)? = try? StrictJSON.parse(payload),
            case .string(let id)? = members["dispatchTargetId"]
        else { return nil }
        return id
    }

    /// Checks that a request the router accepted as signed was signed by a target in `allowed`
    /// that held the fixture key before it.
    func checkSigned(_ request: HTTPRequest, by allowed: Set<String>, before: Snapshot, _ what: String) {
        guard let id = signer(of: request) else { return fuzzCheck(false, "\(what) without one readable signature") }
        fuzzCheck(allowed.contains(id), "\(what) signed by \(id.debugDescription), not one of \(allowed.sorted())")
        fuzzCheck(before.keys[id]?.first == RouterFuzz.fixtureKey, "\(what) signed by a target without the fixture key")
    }

    // MARK: State

    func snapshot() -> Snapshot {
        var snapshot = Snapshot()
        let now = clock.nowMillis()
        for deviceId in knownDevices {
            let pending = state.pendingOperations(for: deviceId, nowMillis: now).map(\.token)
            if !pending.isEmpty { snapshot.pending[deviceId] = pending }
            let targets = state.targetIds(ofDevice: deviceId)
            if !targets.isEmpty { snapshot.targets[deviceId] = targets }
        }
        for id in signableTargets {
            guard let record = state.target(id) else { continue }
            snapshot.keys[id] =
                [Data(record.signatureKey.x963Representation)]
                + (record.encryptionKey.map { [Data($0.x963Representation)] } ?? [])
        }
        return snapshot
    }

    /// Drops from `stored` what a snapshot made the backend drop: reading a device's pending
    /// operations drops those that expired over an hour ago (BackendState.pendingOperations), and
    /// every device with operations is known.
    mutating func dropPurgeable() {
        let (horizon, overflow) = clock.nowMillis().subtractingReportingOverflow(BackendState.purgeGraceMillis)
        guard !overflow else { return }
        stored = stored.filter { $0.value.expiresAtMillis >= horizon }
    }

    mutating func checkOperations(
        _ request: HTTPRequest, _ route: Route, _ body: [String: Any]?, _ answer: Answer?,
        before: Snapshot, after: Snapshot
    ) {
        var expected = before.pending
        if route.isControl(WirePaths.Emulator.dispatch), request.method == "POST", let answer, answer.status == 201 {
            guard let deviceId = body?["deviceId"] as? String, let json = answer.object,
                case .string(let token)? = json["payload"]?["redeemData"]?["token"],
                case .string(let redeemURL)? = json["payload"]?["redeemData"]?["redeemUrl"],
                case .integer(let creation)? = json["creationTimeInEpochMillis"],
                case .integer(let lifetime)? = json["additionalInformation"]?["lifetimeMillis"],
                case .string(let kind)? = json["additionalInformation"]?["operation"]
            else {
                return fuzzCheck(false, "a dispatch answered 201 without its operation: \(answer.text.prefix(300))")
            }
            fuzzCheck(stored[token] == nil && !redeemedTokens.contains(token), "a dispatch token handed out twice")
            fuzzCheck(
                redeemURL == RouterFuzz.baseURL + WirePaths.basePath + WirePaths.redeem + "/" + kind,
                "redeemUrl \(redeemURL) for \(kind)")
            fuzzCheck(creation > lastCreationMillis, "creation time \(creation) after \(lastCreationMillis)")
            fuzzCheck((1...BackendRouter.maximumLifetimeMillis).contains(lifetime), "a lifetime of \(lifetime) ms")
            lastCreationMillis = creation
            dispatchedTokens.append(token)
            // The store (BackendState.add, at the server clock's time, which the creation time may
            // run ahead of): full, it first drops what expired over an hour ago.
            let clockNow = clock.nowMillis()
            if stored.count >= RouterFuzz.operationCapacity {
                let (horizon, overflow) = clockNow.subtractingReportingOverflow(BackendState.purgeGraceMillis)
                stored = stored.filter { overflow || $0.value.expiresAtMillis >= horizon }
            }
            fuzzCheck(
                stored.count < RouterFuzz.operationCapacity,
                "a dispatch stored with \(stored.count) operations kept (capacity \(RouterFuzz.operationCapacity))")
            let (sum, overflow) = creation.addingReportingOverflow(lifetime)
            stored[token] = Dispatched(
                deviceId: deviceId, kind: kind, creationMillis: creation, lifetimeMillis: lifetime,
                expiresAtMillis: overflow ? .max : sum)
            expected[deviceId, default: []].append(token)
            // The device's bounds, at the server clock's time (DeviceOperations.boundPassed): what a
            // fetch now would list, also when dispatches within one millisecond put the creation
            // times ahead of the clock.
            let pending = state.pendingOperations(for: deviceId, nowMillis: clockNow)
            fuzzCheck(
                pending.count <= RouterFuzz.pendingCapacityPerDevice,
                "\(pending.count) operations pending after a dispatch (capacity \(RouterFuzz.pendingCapacityPerDevice))"
            )
            fuzzCheck(
                StoredOperation.answer(pending).count <= OperationsAnswerSize.maximumJSONBytes,
                "an operations answer over \(OperationsAnswerSize.maximumJSONBytes) bytes")
        } else if route.redeemKind != nil, let answer, answer.status == 200, let json = answer.object,
            case .integer(let lifetime)? = json["lifetimeMillis"]
        {
            guard let token = body?["token"] as? String, let operation = stored[token] else {
                return fuzzCheck(false, "a redemption answered 200 for a token never dispatched")
            }
            fuzzCheck(!operation.redeemed, "a token redeemed twice")
            fuzzCheck(
                route.redeemKind == operation.kind, "a \(operation.kind) token redeemed as \(route.redeemKind ?? "")")
            fuzzCheck(
                lifetime == operation.lifetimeMillis,
                "lifetime \(lifetime), dispatched with \(operation.lifetimeMillis)")
            fuzzCheck(expected[operation.deviceId]?.contains(token) == true, "a token redeemed that was not pending")
            expected[operation.deviceId]?.removeAll { $0 == token }
            if expected[operation.deviceId]?.isEmpty == true { expected[operation.deviceId] = nil }
            stored[token]?.redeemed = true
            redeemedTokens.insert(token)
        } else if route.isControl(WirePaths.Emulator.clock), request.method == "POST", answer?.status == 200 {
            // The clock moved: operations may expire or, set back, be pending again.
            lastCreationMillis = .min
            for (deviceId, tokens) in after.pending {
                for token in tokens {
                    fuzzCheck(
                        stored[token]?.deviceId == deviceId && stored[token]?.redeemed == false,
                        "after a clock set, a token pending that was not dispatched to the device or was redeemed")
                }
            }
            expected = after.pending
        }
        if route.isControl(WirePaths.Emulator.faults), answer?.status == 200 {
            faultsMayBeActive = request.method == "POST" || (faultsMayBeActive && request.method != "DELETE")
        }
        // Compared as sets: a dispatch after a clock set back may be listed before older ones.
        fuzzCheck(
            expected.mapValues { Set($0) } == after.pending.mapValues { Set($0) },
            "pending operations changed by \(request.method) \(request.path) answered \(answer?.status ?? 0)")
    }

    mutating func checkTargets(
        _ request: HTTPRequest, _ route: Route, _ body: [String: Any]?, _ answer: Answer?,
        before: Snapshot, after: Snapshot
    ) {
        var expectedTargets = before.targets
        var expectedKeys = before.keys
        if route.targetId == "", let answer, answer.status == 201, let json = answer.object,
            case .string(let id)? = json["id"], json["extId"] != nil
        {
            guard let deviceId = body?["deviceId"] as? String else {
                return fuzzCheck(false, "a registration answered 201 without a deviceId")
            }
            targetCount += 1
            fuzzCheck(targetCount <= RouterFuzz.targetCapacity, "\(targetCount) dispatch targets kept")
            fuzzCheck(before.keys[id] == nil && !signableTargets.contains(id), "a dispatch target id handed out twice")
            // Trust on first use: a further target needs a signature of one of the device's.
            if let existing = before.targets[deviceId] {
                checkSigned(request, by: existing, before: before, "a further dispatch target")
            }
            expectedTargets[deviceId, default: []].insert(id)
            signableTargets.append(id)
        } else if let id = route.targetId, !id.isEmpty, let answer, answer.status == 200, let json = answer.object,
            json["id"] == .string(id)
        {
            checkSigned(request, by: [id], before: before, "a rotation")
            if let old = before.keys[id], let new = after.keys[id] {
                // The encryption key is kept as registered (BackendState.updateKeys).
                fuzzCheck(old.count == 1 || old.dropFirst() == new.dropFirst(), "a rotation changed the encryption key")
                expectedKeys[id] = new
            }
        }
        fuzzCheck(
            expectedTargets == after.targets,
            "dispatch targets changed by \(request.method) \(request.path) answered \(answer?.status ?? 0)")
        fuzzCheck(
            expectedKeys == after.keys,
            "a target's keys changed by \(request.method) \(request.path) answered \(answer?.status ?? 0)")
    }

    /// A fetch answered 200 without faults: exactly the device's pending operations, for a
    /// signature of one of its targets.
    func checkFetch(_ request: HTTPRequest, _ route: Route, _ answer: Answer?, after: Snapshot) {
        guard let deviceId = route.pathDeviceId, let answer, answer.status == 200, !faultsMayBeActive else { return }
        checkSigned(request, by: after.targets[deviceId] ?? [], before: after, "a fetch of \(deviceId)")
        let pending = after.pending[deviceId] ?? []
        let plaintext: [UInt8]
        if answer.contentType == OperationsAnswerFormat.joseContentType {
            let compact = answer.text
            fuzzCheck((try? CompactJWE(parsing: compact)) != nil, "a JOSE answer that is no compact JWE")
            // Encrypted to the target's encryption key: one the input registered is not known.
            guard let id = signer(of: request), let keys = after.keys[id], keys.count == 2,
                keys[1] == RouterFuzz.recipientKey
            else { return }
            guard let decrypted = try? JWE.decrypt(compact, with: RouterFuzz.decryptionKey) else {
                return fuzzCheck(false, "an answer encrypted to the recipient key does not decrypt")
            }
            plaintext = Array(decrypted)
        } else {
            fuzzCheck(
                answer.contentType == WireMediaType.json, "an operations answer of type \(answer.contentType ?? "none")"
            )
            plaintext = answer.response.body
        }
        guard case .object(let json)? = try? StrictJSON.parse(plaintext),
            case .array(let operations)? = json["operations"]
        else { return fuzzCheck(false, "an operations answer that is not {\"operations\":[…]}") }
        let tokens = operations.map { operation -> String in
            if case .string(let token)? = operation["payload"]?["redeemData"]?["token"] { return token }
            return ""
        }
        fuzzCheck(tokens == pending, "the operations answer lists \(tokens), the device has \(pending) pending")
    }

    mutating func checkStatistics() {
        let now = state.statistics
        let requests = now.requests.values.reduce(0, +) - statistics.requests.values.reduce(0, +)
        let rejections = now.rejections.values.reduce(0, +) - statistics.rejections.values.reduce(0, +)
        fuzzCheck((0...1).contains(requests), "one request counted \(requests) times")
        fuzzCheck((0...1).contains(rejections), "one request counted as \(rejections) rejections")
        for (token, count) in now.redemptions {
            fuzzCheck(count == 1 && redeemedTokens.contains(token), "\(count) redemptions counted for a token")
        }
        statistics = now
    }

    // MARK: Answers

    /// Writes the answer as the server does (HTTPConnection) and checks it was not replaced.
    func checkWritten(_ response: HTTPResponse, to request: HTTPRequest, hangs: Bool) {
        fuzzCheck((200...599).contains(response.status), "status \(response.status)")
        for field in response.headers {
            fuzzCheck(
                HTTPSyntax.isToken(field.name) && HTTPSyntax.isFieldValue(field.value),
                "a header field the server would refuse: \(field.name.debugDescription)")
        }
        let omitBody = request.method == "HEAD"
        let bytes = HTTPResponseSerializer.serialize(
            response, dateMillis: clock.nowMillis(), omitBody: omitBody,
            connection: request.wantsConnectionClose ? .close : .none, contentLengthSurplus: hangs ? 1 : 0)
        fuzzCheck(
            bytes.starts(with: Array("HTTP/1.1 \(response.status) ".utf8)),
            "written as \(String(decoding: bytes.prefix(40), as: UTF8.self).debugDescription)")
        let owesBody = !omitBody && response.status != 204 && response.status != 304
        fuzzCheck(
            !owesBody || bytes.suffix(response.body.count).elementsEqual(response.body), "written without its body")
    }

    /// The shape of error answers, and JSON answers being JSON.
    func checkShape(_ answer: Answer) {
        let status = answer.status
        if status >= 400 {
            if (status == 404 || status == 405) && answer.response.body.isEmpty {
                if status == 405 {
                    fuzzCheck(answer.response.headers[WireHeader.allow]?.isEmpty == false, "405 without Allow")
                }
                return
            }
            guard let json = answer.object, case .string(let code)? = json[WireErrorCode.Member.errorCode],
                case .string? = json[WireErrorCode.Member.message]
            else {
                return fuzzCheck(
                    false, "error answer \(status) without errorCode and message: \(answer.text.prefix(200))")
            }
            // A wrong-content-type fault relabels whatever the endpoint answered.
            fuzzCheck(
                faultsMayBeActive || answer.contentType == WireMediaType.json,
                "error answer \(status) of type \(answer.contentType ?? "none")")
            fuzzCheck(WireErrorCode(rawValue: code) != nil, "errorCode \(code) is not a WireErrorCode")
            if code == WireErrorCode.clockSkewTooBig.rawValue {
                guard case .integer? = json[WireErrorCode.Member.serverTimeInEpochMillis] else {
                    return fuzzCheck(false, "CLOCK_SKEW_TOO_BIG without serverTimeInEpochMillis")
                }
            }
            if status == 429 {
                fuzzCheck(answer.response.headers[WireHeader.retryAfter] != nil, "429 without Retry-After")
            }
        } else if !faultsMayBeActive, answer.contentType == WireMediaType.json {
            fuzzCheck(
                (try? StrictJSON.parse(answer.response.body)) != nil,
                "a JSON answer that is not JSON: \(answer.text.prefix(200))")
        }
    }
}

/// An answer, its body read once.
private struct Answer {
    let response: HTTPResponse
    let object: [String: JSONValue]?

    init(_ response: HTTPResponse) {
        self.response = response
        if response.body.count <= 1 << 16, case .object(let members)? = try? StrictJSON.parse(response.body) {
            object = members
        } else {
            object = nil
        }
    }

    var status: Int { response.status }
    var contentType: String? { response.headers[WireHeader.contentType] }
    var text: String { String(decoding: response.body, as: UTF8.self) }
}

/// Where a request goes, as the router reads its path.
private struct Route {
    let path: String
    /// The device of `GET …/outofbandoperations/{deviceId}`.
    let pathDeviceId: String?
    /// "" for the registration collection, the id of `…/dispatch/targets/{id}`, nil otherwise.
    let targetId: String?
    /// The kind of `…/token/redeem/{kind}`.
    let redeemKind: String?

    init(_ request: HTTPRequest, basePath: String, router: BackendRouter) {
        path = request.path
        let deviceId = router.remainder(of: path, after: basePath + WirePaths.pendingOperations)
        pathDeviceId = deviceId?.isEmpty == false ? deviceId : nil
        targetId = router.remainder(of: path, after: basePath + WirePaths.dispatchTargets)
        let kind = router.remainder(of: path, after: basePath + WirePaths.redeem)
        redeemKind = kind.flatMap(OperationKind.init(rawValue:))?.rawValue
    }

    func isControl(_ route: String) -> Bool { path == route }
}

/// The index a `~X` picks among `count` (at least 1): X's distance from "0", modulo `count`, so
/// that "~0", "~1"… pick the first, the second….
private func picked(_ character: UInt8, of count: Int) -> Int {
    let offset = (Int(character) - Int(UInt8(ascii: "0"))) % count
    return offset < 0 ? offset + count : offset
}

private func jsonObject(_ body: [UInt8]) -> [String: Any]? {
    guard !body.isEmpty else { return nil }
    return (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
}

extension JSONValue {
    fileprivate subscript(_ member: String) -> JSONValue? {
        if case .object(let members) = self { return members[member] }
        return nil
    }
}

func fuzzWarmUp() {
    _ = (RouterFuzz.limits, RouterFuzz.peer, RouterFuzz.vectorTargets, RouterFuzz.decryptionKey)
    _ = (RouterFuzz.fixtureKey, RouterFuzz.recipientKey)
    let dispatch = #"{"deviceId":"fuzz-device-1","channel":"link"}"#
    let wire =
        "POST /_emulator/dispatch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + "Content-Length: \(dispatch.utf8.count)\r\n\r\n\(dispatch)"
        + "GET /nevisfido/devices/outofbandoperations/fuzz-device-1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "Device-Signature: ~0\r\nAccept: application/jose;charset=UTF-8\r\n\r\n"
        + "GET /_emulator/stats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    fuzzRun(fuzzBackendRouter, Array(wire.utf8))
}

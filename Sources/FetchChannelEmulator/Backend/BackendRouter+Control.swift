import DeviceSigning
import FetchChannelWire
import Foundation

/// The loopback-only control API under `/_emulator/`: dispatching operations, faults, statistics.
extension BackendRouter {
    func control(_ request: HTTPRequest) -> HTTPResponse {
        switch (request.method, request.path) {
        case ("POST", WirePaths.Emulator.dispatch):
            guard let body = BackendResponses.object(from: request) else {
                return BackendResponses.malformed("The body must be a JSON object.")
            }
            if let refusal = Self.unknownMember(of: body, allowed: Self.dispatchMembers) { return refusal }
            switch dispatch(body) {
            case .success(let operation):
                return HTTPResponse.json(status: HTTPStatus.created.code, Data(operation.json))
            case .failure(let refusal): return refusal.response
            }
        case ("POST", WirePaths.Emulator.clock):
            guard let body = BackendResponses.object(from: request) else {
                return BackendResponses.malformed("The body must be a JSON object.")
            }
            if let refusal = Self.unknownMember(of: body, allowed: ["offsetSeconds"]) { return refusal }
            guard case .number(let seconds) = ControlNumber(body["offsetSeconds"]),
                seconds.isFinite, abs(seconds) <= 10 * 365 * 86_400
            else {
                return BackendResponses.malformed(
                    "The body must be {\"offsetSeconds\": number} (at most ten years either way).")
            }
            setClockOffset(millis: Int64((seconds * 1000).rounded()))
            return BackendResponses.json(.ok, ["offsetSeconds": seconds])
        case ("POST", WirePaths.Emulator.faults):
            guard let body = BackendResponses.object(from: request) else {
                return BackendResponses.malformed("The body must be a JSON object.")
            }
            if let refusal = Self.unknownMember(of: body, allowed: Self.faultMembers) { return refusal }
            guard let endpoint = (body["endpoint"] as? String).flatMap(EmulatorEndpoint.init(rawValue:)),
                let kind = (body["kind"] as? String).flatMap(EmulatorFault.Kind.init(rawValue:))
            else {
                let endpoints = EmulatorEndpoint.allCases.map(\.rawValue).joined(separator: ", ")
                let kinds = EmulatorFault.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                return BackendResponses.malformed("endpoint must be one of \(endpoints); kind one of \(kinds).")
            }
            if let problem = Self.faultCountProblem(body["count"]) { return BackendResponses.malformed(problem) }
            let (seconds, status) = (ControlNumber(body["seconds"]), ControlNumber(body["status"]))
            if case .notANumber = seconds { return BackendResponses.malformed("seconds must be a number") }
            if !status.isAbsent, status.wholeNumber(in: 200...599) == nil {
                return BackendResponses.malformed("status must be a whole number in 200...599")
            }
            let fault = EmulatorFault(
                endpoint: endpoint, kind: kind, seconds: seconds.value, status: status.wholeNumber(in: 200...599),
                count: ControlNumber(body["count"]).wholeNumber(in: 1...Self.maximumFaultCount))
            if let problem = fault.validationProblem() { return BackendResponses.malformed(problem) }
            // Full, as the other limits answer: the request itself was well formed.
            guard state.addFault(fault) else {
                return BackendResponses.error(.insufficientStorage, WireErrorCode.tooManyFaults, Self.tooManyFaults)
            }
            return BackendResponses.json(.ok, [:])
        case ("DELETE", WirePaths.Emulator.faults):
            state.clearFaults()
            return BackendResponses.json(.ok, [:])
        case ("GET", WirePaths.Emulator.stats), ("HEAD", WirePaths.Emulator.stats):
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
            return BackendResponses.methodNotAllowed(allow: Self.readMethods)
        default:
            return BackendResponses.notFound
        }
    }

    /// The members each control body may have. Any other is refused rather than ignored: a
    /// misspelled `lifetimeSecnds` would otherwise leave the default in place without a word.
    static let dispatchMembers: Set<String> = ["deviceId", "channel", "lifetimeSeconds", "operation", "data"]
    static let faultMembers: Set<String> = ["endpoint", "kind", "count", "seconds", "status"]

    /// A 400 naming the first member of `body` (in name order) that is not `allowed`, or nil.
    static func unknownMember(of body: [String: Any], allowed: Set<String>) -> HTTPResponse? {
        guard let unknown = body.keys.sorted().first(where: { !allowed.contains($0) }) else { return nil }
        let shown = unknown.count > 64 ? unknown.prefix(64) + "…" : unknown  // the answer is JSON-escaped
        return BackendResponses.malformed(
            "Unknown member \"\(shown)\"; the body takes \(allowed.sorted().joined(separator: ", ")).")
    }

    /// The most requests a counted fault applies to; a fault for longer leaves `count` out.
    static let maximumFaultCount = 1_000_000_000

    /// Why a fault's `count` cannot be taken, or nil (absent or null: until the faults are
    /// cleared). Checked as a Double before it is read as an Int: NSNumber's `intValue` of 1e30 is
    /// not 1e30 (it came out below 1, and was refused as such).
    static func faultCountProblem(_ value: Any?) -> String? {
        let range = "a whole number from 1 to \(maximumFaultCount) (leave it out for every request until cleared)"
        let count: Double
        switch ControlNumber(value) {
        case .absent: return nil
        case .notANumber: return "count must be \(range)"
        case .number(let number): count = number
        }
        guard count.isFinite, count == count.rounded() else { return "count must be \(range)" }
        if count < 1 { return "count must be at least 1" }
        if count > Double(maximumFaultCount) { return "count is too large: it must be \(range)" }
        return nil
    }

    static let tooManyFaults =
        "At most \(BackendState.maximumFaults) faults are kept; clear them (DELETE /_emulator/faults) first."

    /// The most bytes of JSON an operation's `data` takes: a real payload is a few hundred, and
    /// the emulator keeps up to ``BackendState/maximumOperations`` operations (800 MB of payloads
    /// at most).
    static let maximumDataBytes = 4 * 1024

    /// The deepest nesting of arrays and objects an operation's `data` may have: the operations
    /// answer holds it four levels deep (`{"operations":[{"payload":{"data":…}}]}`), and the
    /// client's strict reader takes 512 levels in all (docs/ARCHITECTURE.md, "Invariants", JSON).
    /// Deeper, every later fetch of the device would fail, not only this operation.
    static let maximumDataDepth = StrictJSON.Limits.standard.maximumDepth - 4

    /// The nesting of arrays and objects in a value `JSONSerialization` read: 0 for a scalar.
    /// Its recursion is bounded by that reader's own depth limit (512).
    static func nestingDepth(of value: Any) -> Int {
        if let object = value as? [String: Any] {
            return 1 + object.values.reduce(0) { Swift.max($0, nestingDepth(of: $1)) }
        }
        if let array = value as? [Any] {
            return 1 + array.reduce(0) { Swift.max($0, nestingDepth(of: $1)) }
        }
        return 0
    }

    /// The longest lifetime of an operation: 30 days.
    static let maximumLifetimeMillis: Int64 = 30 * 86_400 * 1000

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
        let lifetimeSeconds: Double
        switch ControlNumber(body["lifetimeSeconds"]) {
        case .absent: lifetimeSeconds = configuration.defaultLifetimeSeconds
        case .number(let seconds): lifetimeSeconds = seconds
        case .notANumber: lifetimeSeconds = .nan  // refused below, with the range
        }
        // Checked as stored, in whole milliseconds: 0.0001 s passed a check of the seconds and
        // became an operation of 0 ms, expired at its creation.
        let lifetimeMillis = (lifetimeSeconds * 1000).rounded()
        guard lifetimeMillis.isFinite, lifetimeMillis >= 1, lifetimeMillis <= Double(Self.maximumLifetimeMillis) else {
            return .failure(
                BackendResponses.Refusal(
                    BackendResponses.malformed(
                        "lifetimeSeconds must be at least 1 ms and at most 30 days (2592000 s) once "
                            + "rounded to whole milliseconds.")))
        }
        // Absent or null is the default; any other value must name a kind (5 is not "authentication").
        let kindValue = body["operation"].flatMap { $0 is NSNull ? nil : $0 }
        guard
            let kind = kindValue == nil
                ? .authentication : (kindValue as? String).flatMap(OperationKind.init(rawValue:))
        else {
            return .failure(
                BackendResponses.Refusal(
                    BackendResponses.malformed("operation must be registration, authentication or deregistration.")))
        }
        if let data = body["data"] {
            guard Self.nestingDepth(of: data) <= Self.maximumDataDepth else {
                return .failure(
                    BackendResponses.Refusal(
                        BackendResponses.malformed(
                            "data must nest at most \(Self.maximumDataDepth) arrays and objects: the operations "
                                + "answer holds it 4 levels deep, and clients read at most "
                                + "\(StrictJSON.Limits.standard.maximumDepth).")))
            }
            let text = try? JSONSerialization.data(withJSONObject: data, options: [.fragmentsAllowed])
            guard let text, text.count <= Self.maximumDataBytes else {
                return .failure(
                    BackendResponses.Refusal(
                        BackendResponses.malformed("data must be JSON of at most \(Self.maximumDataBytes) bytes.")))
            }
        }
        let data = body["data"].map(JSONObjectText.init(object:))
        // Set before the server accepts (ReferenceBackend); unset, a redeem URL would be relative.
        let base = baseURL.withLock { $0 }
        guard !base.isEmpty else {
            return .failure(
                BackendResponses.Refusal(
                    BackendResponses.error(
                        .serviceUnavailable, WireErrorCode.notStarted,
                        "The emulator does not know its own URL yet; dispatch once it has started.")))
        }
        // The creation time runs ahead of the server clock when dispatches come within one
        // millisecond (each gets a later time than the one before). The device's bound is checked
        // at the clock's time: at the creation time, an operation of 1 ms dispatched just before
        // would count as expired already while a fetch now still lists it.
        let (now, clockNow) = lastCreationMillis.withLock { last in
            let clockNow = clock.nowMillis()
            last = Swift.max(clockNow, last == .max ? last : last + 1)
            return (last, clockNow)
        }
        // Saturating: the server clock may stand at its end (an offset of Int64.max, in process).
        let (sum, overflow) = now.addingReportingOverflow(Int64(lifetimeMillis))
        let expiresAt = overflow ? Int64.max : sum
        let token = BackendResponses.randomIdentifier()
        guard
            let operation = StoredOperation(
                deviceId: deviceId, kind: kind, creationTimeMillis: now,
                expiresAtMillis: expiresAt,
                channel: channel, token: token,
                redeemURL: base + configuration.basePath + WirePaths.redeem + "/" + kind.rawValue,
                data: data)
        else {
            return .failure(
                BackendResponses.Refusal(
                    BackendResponses.error(
                        .internalServerError, WireErrorCode.serializationFailed,
                        "The emulator could not write the operation as JSON; it was not stored.")))
        }
        switch state.add(operation, nowMillis: clockNow) {
        case .added:
            return .success(operation)
        case .full:
            return .failure(
                BackendResponses.Refusal(
                    BackendResponses.error(
                        .insufficientStorage, WireErrorCode.tooManyOperations,
                        "The emulator holds the most operations it keeps.")))
        case .deviceFull:
            return .failure(
                BackendResponses.Refusal(
                    BackendResponses.error(
                        .insufficientStorage, WireErrorCode.tooManyOperations,
                        "Device \(deviceId.prefix(64)) has \(configuration.pendingOperationsPerDevice) pending "
                            + "operations, the most one device may have; redeem them or let them expire first.")))
        case .deviceAnswerFull:
            return .failure(
                BackendResponses.Refusal(
                    BackendResponses.error(
                        .insufficientStorage, WireErrorCode.tooManyOperations,
                        "Device \(deviceId.prefix(64))'s operations answer would be larger than "
                            + "\(OperationsAnswerSize.maximumJSONBytes) bytes with this operation, the most one "
                            + "device's may be (encrypted, it must fit the \(OperationsAnswerSize.clientMaximumBytes) "
                            + "bytes clients read); redeem its operations or let them expire first.")))
        }
    }
}

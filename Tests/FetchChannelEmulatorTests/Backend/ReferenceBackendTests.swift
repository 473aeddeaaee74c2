import DeviceSigning
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelEmulator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite(.dedicatedThread) struct ReferenceBackendTests {
    let start: Int64 = 1_700_000_000_000

    @Test func registerDispatchFetchRedeemOverHTTP() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let base = backend.baseURL

        // Register through the HTTP endpoint with a public JWK.
        let key = try P256.Signing.PrivateKey()
        let jwk = try #require(
            try JSONSerialization.jsonObject(with: Data(key.publicKey.jwk.jsonString.utf8)) as? [String: String])
        let registered = try await BackendClient.send(
            "POST", base.appendingPathComponent("nevisfido/token/dispatch/targets"),
            json: [
                "username": "alice", "deviceId": "phone-1", "name": "Alice's phone", "target": "fcm-token",
                "dispatcher": "firebase-cloud-messaging", "signatureKey": jwk,
            ])
        #expect(registered.status == 201)
        let targetId = try #require(registered.json["id"] as? String)
        #expect(registered.json["extId"] is String)
        let device = TestDevice(
            deviceId: "phone-1", key: key, dispatchTargetId: targetId,
            signer: try DeviceSignatureSigner(key: key, dispatchTargetId: targetId, clock: clock))

        // Dispatch three operations on three channels through the control API.
        var dispatched: [String] = []
        for channel in ["firebase-cloud-messaging", "png-qr-code", "link"] {
            let answer = try await BackendClient.send(
                "POST", base.appendingPathComponent("_emulator/dispatch"),
                json: ["deviceId": "phone-1", "channel": channel, "lifetimeSeconds": 120])
            #expect(answer.status == 201)
            #expect(answer.json["dispatchChannel"] as? String == channel)
            let token = try #require(
                ((answer.json["payload"] as? [String: Any])?["redeemData"] as? [String: Any])?["token"] as? String)
            dispatched.append(token)
            clock.advance(byMillis: 10)
        }

        let fetched = try await BackendClient.fetch(backend, device)
        #expect(fetched.status == 200)
        #expect(fetched.header("Content-Type") == "application/json")
        #expect(fetched.header("Date") == HTTPDate.format(millis: clock.nowMillis()))
        #expect(fetched.tokens == dispatched, "operations in creation order")
        let first = try #require(fetched.operations.first)
        let redeemURL = try #require(
            ((first["payload"] as? [String: Any])?["redeemData"] as? [String: Any])?["redeemUrl"] as? String)
        #expect(redeemURL.hasPrefix(base.absoluteString))

        let redeemed = try await BackendClient.redeem(redeemURL, token: dispatched[0])
        #expect(redeemed.status == 200)
        #expect(redeemed.json["op"] as? String == "Auth")
        #expect(redeemed.json["uafRequest"] is String)

        let again = try await BackendClient.fetch(backend, device)
        #expect(again.tokens == Array(dispatched.dropFirst()), "a redeemed operation is no longer pending")

        let twice = try await BackendClient.redeem(redeemURL, token: dispatched[0])
        #expect(twice.status == 410)
        #expect(twice.errorCode == "TOKEN_ALREADY_REDEEMED")
        #expect(backend.statistics.redemptions[dispatched[0]] == 1)
        #expect(backend.statistics.requests(to: .operations) == 2)
    }

    @Test func everyErrorAnswerOfTheArchitecture() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)

        // Clock skew: the server 10 minutes ahead.
        backend.clockOffsetMillis = 600_000
        let skewed = try await BackendClient.fetch(backend, device)
        #expect(skewed.status == 401)
        #expect(skewed.errorCode == "CLOCK_SKEW_TOO_BIG")
        #expect((skewed.json["serverTimeInEpochMillis"] as? NSNumber)?.int64Value == start + 600_000)
        #expect(skewed.header("Date") == HTTPDate.format(millis: start + 600_000), "Date follows the server clock")
        backend.clockOffsetMillis = 0

        // A signature by another key.
        let impostor = try DeviceSignatureSigner(
            key: P256.Signing.PrivateKey(), dispatchTargetId: device.dispatchTargetId, clock: clock)
        let badSignature = try await BackendClient.fetch(backend, device, signature: impostor.headerValue())
        #expect(badSignature.status == 401)
        #expect(badSignature.errorCode == "INVALID_SIGNATURE")

        // An unknown dispatch target: answered as a bad signature, so its existence stays hidden.
        let stranger = try DeviceSignatureSigner(key: device.key, dispatchTargetId: "no-such-target", clock: clock)
        let unknown = try await BackendClient.fetch(backend, device, signature: stranger.headerValue())
        #expect(unknown.status == 401)
        #expect(unknown.errorCode == "INVALID_SIGNATURE")

        // A replayed request id.
        let once = try device.signer.headerValue()
        #expect(try await BackendClient.fetch(backend, device, signature: once).status == 200)
        let replayed = try await BackendClient.fetch(backend, device, signature: once)
        #expect(replayed.status == 401)
        #expect(replayed.errorCode == "REPLAYED_REQUEST")

        // Malformed and missing headers.
        let malformed = try await BackendClient.fetch(backend, device, signature: "not.a.jws")
        #expect(malformed.status == 400)
        #expect(malformed.errorCode == "MALFORMED_REQUEST")
        let missing = try await BackendClient.send(
            "GET", backend.baseURL.appendingPathComponent("nevisfido/devices/outofbandoperations/\(device.deviceId)"))
        #expect(missing.status == 400)
        #expect(missing.errorCode == "MALFORMED_REQUEST")

        // Another device's operations with this device's signature.
        let other = try await BackendClient.send(
            "GET", backend.baseURL.appendingPathComponent("nevisfido/devices/outofbandoperations/someone-else"),
            headers: [DeviceSignatureSigner.headerName: try device.signer.headerValue()])
        #expect(other.status == 401)
        #expect(other.errorCode == "INVALID_SIGNATURE")

        // An expired token.
        let operation = try backend.dispatch(deviceId: device.deviceId, channel: "link", lifetimeSeconds: 30)
        clock.advance(byMillis: 30_000)
        #expect(try await BackendClient.fetch(backend, device).tokens.isEmpty, "an expired operation is not pending")
        let expired = try await BackendClient.redeem(operation.redeemURL, token: operation.token)
        #expect(expired.status == 410)
        #expect(expired.errorCode == "TOKEN_EXPIRED")

        // Endpoint not provided, wrong method.
        #expect(
            try await BackendClient.send("GET", backend.baseURL.appendingPathComponent("nevisfido/unknown")).status
                == 404)
        let wrongMethod = try await BackendClient.send(
            "DELETE", backend.baseURL.appendingPathComponent("nevisfido/devices/outofbandoperations/x"))
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow") == "GET, HEAD")
        #expect(wrongMethod.header("Date") != nil)
    }

    @Test func toleranceEdgesBothWays() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(toleranceMillis: 60_000, clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)
        for (offset, accepted) in [(60_000, true), (-60_000, true), (60_001, false), (-60_001, false)]
            as [(Int64, Bool)]
        {
            let answer = try await BackendClient.fetch(
                backend, device, signature: device.signer.headerValue(offsetMillis: offset))
            #expect((answer.status == 200) == accepted, "device offset \(offset) ms")
        }
    }

    @Test func keyRotationIsSignedWithTheOldKey() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)
        let newKey = try P256.Signing.PrivateKey()
        let jwk = try #require(
            try JSONSerialization.jsonObject(with: Data(newKey.publicKey.jwk.jsonString.utf8)) as? [String: String])
        let url = backend.baseURL.appendingPathComponent("nevisfido/token/dispatch/targets/\(device.dispatchTargetId)")

        // Signed with the new key (not yet registered): refused.
        let newSigner = try DeviceSignatureSigner(key: newKey, dispatchTargetId: device.dispatchTargetId, clock: clock)
        let refused = try await BackendClient.send(
            "PATCH", url, json: ["signatureKey": jwk],
            headers: [DeviceSignatureSigner.headerName: try newSigner.headerValue()])
        #expect(refused.status == 401)

        let rotated = try await BackendClient.send(
            "PATCH", url, json: ["signatureKey": jwk],
            headers: [DeviceSignatureSigner.headerName: try device.signer.headerValue()])
        #expect(rotated.status == 200)
        #expect(try await BackendClient.fetch(backend, device, signature: newSigner.headerValue()).status == 200)
        let old = try await BackendClient.fetch(backend, device)
        #expect(old.status == 401)
        #expect(old.errorCode == "INVALID_SIGNATURE")
    }

    @Test func concurrentRedeemsOfOneTokenGiveExactlyOneSuccess() async throws {
        let backend = try ReferenceBackend.start()
        defer { backend.stop() }
        let operation = try backend.dispatch(deviceId: "d", channel: "firebase-cloud-messaging")
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<24 {
                group.addTask { try await BackendClient.redeem(operation.redeemURL, token: operation.token).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 200 }.count == 1)
        #expect(statuses.filter { $0 == 410 }.count == 23)
        #expect(backend.statistics.redemptions[operation.token] == 1)
    }

    /// Setting the clock back starts the replay window afresh. Before, the request ids (and the
    /// cut-off of those dropped) of the time ahead refused every fresh request as replayed, the
    /// compensated retry signed at the server's time too, for every device, until the clock
    /// caught up.
    @Test func aClockSetBackStillAcceptsFreshRequests() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(toleranceMillis: 1_000, clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)
        backend.clockOffsetMillis = 600_000
        let ahead = try DeviceSignatureSigner(key: device.key, dispatchTargetId: device.dispatchTargetId, clock: clock)
        #expect(
            try await BackendClient.fetch(backend, device, signature: ahead.headerValue(offsetMillis: 600_000)).status
                == 200)
        clock.advance(byMillis: 2_500)
        // Drops the first request's id: the cut-off moves to the time ahead.
        #expect(
            try await BackendClient.fetch(backend, device, signature: ahead.headerValue(offsetMillis: 600_000)).status
                == 200)
        backend.clockOffsetMillis = 0
        let fresh = try await BackendClient.fetch(backend, device)
        #expect(fresh.status == 200, "\(fresh.errorCode ?? "")")
        backend.clockOffsetMillis = -600_000
        let compensated = try await BackendClient.fetch(
            backend, device, signature: device.signer.headerValue(offsetMillis: -600_000))
        #expect(compensated.status == 200, "\(compensated.errorCode ?? "")")
        // Within one clock, a replay is still refused, also after the same offset was set again.
        let once = try device.signer.headerValue(offsetMillis: -600_000)
        #expect(try await BackendClient.fetch(backend, device, signature: once).status == 200)
        backend.clockOffsetMillis = -600_000
        #expect(try await BackendClient.fetch(backend, device, signature: once).errorCode == "REPLAYED_REQUEST")
    }

    /// Once the clock was set, operations can share a creation time (the times handed out start
    /// again from the clock): the pending list serves those in dispatch order.
    @Test func operationsOfOneCreationTimeAreServedInDispatchOrder() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)
        var dispatched: [DispatchedOperation] = []
        for round in 0..<2 {
            if round == 1 { backend.clockOffsetMillis = 0 }
            for _ in 0..<40 { dispatched.append(try backend.dispatch(deviceId: device.deviceId, channel: "link")) }
        }
        #expect(Set(dispatched.map(\.creationTimeInEpochMillis)).count == 40, "each creation time twice")
        let expected = dispatched.enumerated()
            .sorted {
                ($0.element.creationTimeInEpochMillis, $0.offset) < ($1.element.creationTimeInEpochMillis, $1.offset)
            }
            .map(\.element.token)
        let answer = try await BackendClient.fetch(backend, device)
        let operations = try #require(answer.json["operations"] as? [[String: Any]])
        let tokens = operations.map {
            (($0["payload"] as? [String: Any])?["redeemData"] as? [String: Any])?["token"] as? String
        }
        #expect(tokens == expected)
    }

    /// The server clock saturates at either end of Int64 (an in-process offset may be anything):
    /// dispatching, listing and serving there do not overflow. A dispatch at Int64.max used to
    /// stop the process computing its expiry.
    @Test func aServerClockAtEitherEndStillServes() async throws {
        let backend = try ReferenceBackend.start()
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: ManualWallClock(millis: start))
        for offset in [Int64.max, Int64.min] {
            backend.clockOffsetMillis = offset
            let dispatched = try backend.dispatch(deviceId: device.deviceId, channel: "link", lifetimeSeconds: 60)
            #expect(dispatched.channel == "link")
            let answer = try await BackendClient.fetch(backend, device)
            #expect(answer.status == 401, "the device is far off this clock: \(answer.status)")
        }
        #expect(throws: HTTPServerError.self) { try TLSServerIdentity.generate(now: .max) }
        #expect(throws: HTTPServerError.self) { try TLSServerIdentity.generate(now: .min) }
    }

    /// The message of the 400 that POST `/_emulator/<path>` with `body` gets, or nil when the
    /// body is taken.
    static func controlRefusal(_ backend: ReferenceBackend, _ path: String, _ body: [String: Any]) async throws
        -> String?
    {
        let url = backend.baseURL.appendingPathComponent("_emulator").appendingPathComponent(path)
        let answer = try await BackendClient.send("POST", url, json: body)
        return answer.status == 400 ? (answer.json["message"] as? String ?? "") : nil
    }

    /// JSON booleans are not numbers, and a status is a whole number: `JSONSerialization` reads
    /// `true` as an NSNumber of 1, and `"count": true` used to count once, `"status": 200.9` to
    /// answer 200, and a `lifetimeSeconds` of the wrong type to fall back to the default.
    @Test func controlNumbersRefuseBooleansFractionsAndStrings() async throws {
        let backend = try ReferenceBackend.start()
        defer { backend.stop() }
        func refusal(_ path: String, _ body: [String: Any]) async throws -> String? {
            try await Self.controlRefusal(backend, path, body)
        }
        let garbage: [String: Any] = ["endpoint": "operations", "kind": "garbage"]
        let count = try await refusal("faults", garbage.merging(["count": true]) { $1 })
        #expect(count?.hasPrefix("count must be a whole number") == true, "\(count ?? "accepted")")
        let status = try await refusal("faults", ["endpoint": "operations", "kind": "status", "status": 200.9])
        #expect(status == "status must be a whole number in 200...599", "\(status ?? "accepted")")
        let seconds = try await refusal("faults", ["endpoint": "operations", "kind": "delay", "seconds": true])
        #expect(seconds == "seconds must be a number", "\(seconds ?? "accepted")")
        #expect(try await refusal("clock", ["offsetSeconds": true]) != nil)
        #expect(backend.clockOffsetMillis == 0)
        for lifetime: Any in [false, "60"] {
            let dispatched = try await refusal(
                "dispatch", ["deviceId": "d", "channel": "link", "lifetimeSeconds": lifetime])
            #expect(
                dispatched?.hasPrefix("lifetimeSeconds must be") == true, "\(lifetime): \(dispatched ?? "accepted")")
        }
        // Numbers that are numbers are still taken.
        #expect(
            try await refusal("faults", ["endpoint": "operations", "kind": "status", "status": 503, "count": 2]) == nil)
        #expect(try await refusal("dispatch", ["deviceId": "d", "channel": "link", "lifetimeSeconds": 60]) == nil)
    }

    /// A control body's member that no route reads is refused, not ignored: a misspelled
    /// `lifetimeSecnds` would otherwise leave the default lifetime without a word. So is an
    /// `operation` that is not a kind's name (5 used to become "authentication").
    @Test func controlBodiesRefuseMembersTheyDoNotRead() async throws {
        let backend = try ReferenceBackend.start()
        defer { backend.stop() }
        func refusal(_ path: String, _ body: [String: Any]) async throws -> String? {
            try await Self.controlRefusal(backend, path, body)
        }
        let misspelled = try await refusal("dispatch", ["deviceId": "d", "channel": "c", "lifetimeSecnds": 1])
        #expect(misspelled?.hasPrefix(#"Unknown member "lifetimeSecnds""#) == true, "\(misspelled ?? "accepted")")
        let fault = try await refusal(
            "faults", ["endpoint": "operations", "kind": "status", "status": 503, "extra": [1]])
        #expect(fault?.hasPrefix(#"Unknown member "extra""#) == true, "\(fault ?? "accepted")")
        let clock = try await refusal("clock", ["offsetSeconds": 1, "offsetSecond": 99])
        #expect(clock?.hasPrefix(#"Unknown member "offsetSecond""#) == true, "\(clock ?? "accepted")")
        #expect(backend.clockOffsetMillis == 0, "nothing of a refused body is applied")
        let operation = try await refusal("dispatch", ["deviceId": "d", "channel": "c", "operation": 5])
        #expect(operation?.hasPrefix("operation must be") == true, "\(operation ?? "accepted")")
        // Every member a route reads is still taken, and a null operation is the default.
        #expect(
            try await refusal(
                "dispatch",
                ["deviceId": "d", "channel": "c", "lifetimeSeconds": 60, "operation": NSNull(), "data": ["k": 1]])
                == nil)
        #expect(
            try await refusal(
                "faults", ["endpoint": "operations", "kind": "delay", "seconds": 0.01, "count": 1]) == nil)
        #expect(try await refusal("clock", ["offsetSeconds": 0]) == nil)
    }

    /// The fault list is bounded: the fault past the limit is refused, in process and over the
    /// control API, until the list is cleared.
    @Test func faultsAreKeptUpToTheirLimit() async throws {
        let backend = try ReferenceBackend.start()
        defer { backend.stop() }
        let fault = EmulatorFault(endpoint: .operations, kind: .status, status: 503, count: 1)
        for _ in 0..<BackendState.maximumFaults { try backend.injectFault(fault) }
        #expect(throws: EmulatorError(code: .capacityReached, reason: "")) { try backend.injectFault(fault) }
        let faults = backend.baseURL.appendingPathComponent("_emulator/faults")
        let refused = try await BackendClient.send(
            "POST", faults, json: ["endpoint": "operations", "kind": "status", "status": 503])
        #expect(refused.status == 507, "full, as the other limits answer; the request was well formed")
        #expect(refused.errorCode == "TOO_MANY_FAULTS")
        #expect((refused.json["message"] as? String)?.contains("DELETE /_emulator/faults") == true)

        #expect(try await BackendClient.send("DELETE", faults).status == 200)
        try backend.injectFault(fault)
        let accepted = try await BackendClient.send(
            "POST", faults, json: ["endpoint": "operations", "kind": "status", "status": 503])
        #expect(accepted.status == 200)
    }

    @Test func controlAPIFaultsAndStatistics() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)
        let control = backend.baseURL.appendingPathComponent("_emulator")

        let injected = try await BackendClient.send(
            "POST", control.appendingPathComponent("faults"),
            json: ["endpoint": "operations", "kind": "status", "status": 503, "count": 1])
        #expect(injected.status == 200)
        let faulted = try await BackendClient.fetch(backend, device)
        #expect(faulted.status == 503)
        #expect(try await BackendClient.fetch(backend, device).status == 200, "a counted fault is used up")

        _ = try await BackendClient.send(
            "POST", control.appendingPathComponent("faults"), json: ["endpoint": "operations", "kind": "garbage"])
        let garbage = try await BackendClient.fetch(backend, device)
        #expect(garbage.status == 200)
        #expect((try? JSONSerialization.jsonObject(with: garbage.body)) == nil)
        #expect(try await BackendClient.send("DELETE", control.appendingPathComponent("faults")).status == 200)

        _ = try await BackendClient.send(
            "POST", control.appendingPathComponent("faults"),
            json: ["endpoint": "operations", "kind": "oversized", "count": 1])
        #expect(try await BackendClient.fetch(backend, device).body.count > 1 << 20)

        _ = try await BackendClient.send(
            "POST", control.appendingPathComponent("faults"),
            json: ["endpoint": "operations", "kind": "wrong-content-type", "count": 1])
        #expect(try await BackendClient.fetch(backend, device).header("Content-Type") == "text/html")

        // Without a count: libcurl retries a GET once when a reused connection closes unanswered.
        _ = try await BackendClient.send(
            "POST", control.appendingPathComponent("faults"), json: ["endpoint": "operations", "kind": "close"])
        await #expect(throws: (any Error).self) { try await BackendClient.fetch(backend, device) }
        #expect(try await BackendClient.send("DELETE", control.appendingPathComponent("faults")).status == 200)

        let bad = try await BackendClient.send(
            "POST", control.appendingPathComponent("faults"), json: ["endpoint": "nowhere", "kind": "close"])
        #expect(bad.status == 400)
        #expect(
            try await BackendClient.send(
                "POST", control.appendingPathComponent("faults"), json: ["endpoint": "redeem", "kind": "delay"]
            ).status == 400,
            "a delay needs seconds")

        let clockAnswer = try await BackendClient.send(
            "POST", control.appendingPathComponent("clock"), json: ["offsetSeconds": -90])
        #expect(clockAnswer.status == 200)
        #expect(backend.clockOffsetMillis == -90_000)

        let stats = try await BackendClient.send("GET", control.appendingPathComponent("stats"))
        #expect(stats.status == 200)
        let requests = try #require(stats.json["requests"] as? [String: Int])
        // 6 answered fetches plus one or two closed attempts (a retry on a reused connection).
        #expect((7...8).contains(requests["operations"] ?? 0), "\(requests)")
        #expect(stats.json["redemptions"] is [String: Int])
    }

    @Test func delayAndHangFaultsMakeClientsWait() async throws {
        let backend = try ReferenceBackend.start()
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: SystemWallClock())
        try backend.injectFault(EmulatorFault(endpoint: .operations, kind: .hang, count: 1))
        var request = URLRequest(
            url: backend.baseURL.appendingPathComponent("nevisfido/devices/outofbandoperations/\(device.deviceId)"))
        request.setValue(try device.signer.headerValue(), forHTTPHeaderField: DeviceSignatureSigner.headerName)
        request.timeoutInterval = 1
        // An answer that never completes times the client out: a timeout, not a closed or reset
        // connection, which a hang must not turn into.
        do {
            _ = try await BackendClient.session.data(for: request)
            Issue.record("the hung request was answered")
        } catch let error as URLError {
            #expect(error.code == .timedOut, "\(error)")
        } catch {
            Issue.record("not a URLError: \(error)")
        }
        try backend.injectFault(EmulatorFault(endpoint: .operations, kind: .delay, seconds: 0.2, count: 1))
        let began = ContinuousClock.now
        #expect(try await BackendClient.fetch(backend, device).status == 200)
        #expect(ContinuousClock.now - began >= .milliseconds(200))
    }

    @Test func malformedControlAndBackendBodies() async throws {
        let backend = try ReferenceBackend.start()
        defer { backend.stop() }
        let base = backend.baseURL
        let cases: [(String, String, Any?)] = [
            ("POST", "nevisfido/token/dispatch/targets", ["deviceId": "x"]),
            (
                "POST", "nevisfido/token/dispatch/targets",
                ["deviceId": "x", "signatureKey": ["kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"]]
            ),
            ("POST", "nevisfido/token/dispatch/targets", nil),
            ("POST", "nevisfido/token/redeem/authentication", ["tok": "x"]),
            ("POST", "_emulator/dispatch", ["deviceId": "x"]),
            ("POST", "_emulator/dispatch", ["deviceId": "x", "channel": "link", "lifetimeSeconds": -1]),
            ("POST", "_emulator/dispatch", ["deviceId": "x", "channel": "link", "operation": "payment"]),
            // A payload over 4 KiB: each operation keeps its data, up to 200,000 operations.
            (
                "POST", "_emulator/dispatch",
                ["deviceId": "x", "channel": "link", "data": String(repeating: "a", count: 4 * 1024)]
            ),
            ("POST", "_emulator/clock", ["offsetSeconds": "ten"]),
        ]
        for (method, path, body) in cases {
            let answer = try await BackendClient.send(method, base.appendingPathComponent(path), json: body)
            #expect(answer.status == 400, "\(method) \(path) \(String(describing: body))")
        }
        #expect(
            try await BackendClient.redeem(
                base.appendingPathComponent("nevisfido/token/redeem/authentication").absoluteString, token: "nope"
            ).errorCode == "UNKNOWN_TOKEN")
        #expect(
            try await BackendClient.send(
                "POST", base.appendingPathComponent("nevisfido/token/redeem/payment"), json: ["token": "x"]
            ).status == 404)
    }

    /// Operations get strictly increasing creation times, but a clock set back is followed: an
    /// operation dispatched after it is created at the clock's time and expires by it. Before, the
    /// times stayed after the latest one handed out, an hour ahead here, and so did the expiry.
    @Test func aClockSetBackIsFollowedByTheNextOperation() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        backend.clockOffsetMillis = 3_600_000
        let ahead = try backend.dispatch(deviceId: "d", channel: "link")
        #expect(ahead.creationTimeInEpochMillis == start + 3_600_000)
        backend.clockOffsetMillis = 0
        let now = try backend.dispatch(deviceId: "d", channel: "link", lifetimeSeconds: 1)
        #expect(now.creationTimeInEpochMillis == start)
        let next = try backend.dispatch(deviceId: "d", channel: "link")
        #expect(next.creationTimeInEpochMillis == start + 1, "still strictly increasing within a millisecond")
        // Through the control API too.
        let set = try await BackendClient.send(
            "POST", backend.baseURL.appendingPathComponent("_emulator/clock"), json: ["offsetSeconds": -60])
        #expect(set.status == 200)
        #expect(try backend.dispatch(deviceId: "d", channel: "link").creationTimeInEpochMillis == start - 60_000)
    }

    @Test func unknownChannelsAndDataAreServedAsDispatched() async throws {
        let clock = ManualWallClock(millis: start)
        let backend = try ReferenceBackend.start(.init(clock: clock))
        defer { backend.stop() }
        let device = try TestDevice(backend: backend, clock: clock)
        _ = try await BackendClient.send(
            "POST", backend.baseURL.appendingPathComponent("_emulator/dispatch"),
            json: [
                "deviceId": device.deviceId, "channel": "carrier-pigeon", "data": ["text": "Pay 10 CHF"],
            ])
        let operation = try #require(try await BackendClient.fetch(backend, device).operations.first)
        #expect(operation["dispatchChannel"] as? String == "carrier-pigeon")
        #expect((operation["payload"] as? [String: Any])?["data"] as? [String: String] == ["text": "Pay 10 CHF"])
    }
}

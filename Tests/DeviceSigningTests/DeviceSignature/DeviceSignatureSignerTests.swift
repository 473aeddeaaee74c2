import DeviceSigning
import FetchChannelWire
import Foundation
import Testing

@Suite struct DeviceSignatureSignerTests {
    typealias F = DeviceSignatureFixtures

    @Test func headerNameIsDeviceSignature() {
        #expect(DeviceSignatureSigner.headerName == "Device-Signature")
    }

    @Test func outputParsesAndVerifies() throws {
        let key = try F.fixtureKey()
        let clock = ManualWallClock(millis: F.t0)
        let signer = try DeviceSignatureSigner(key: key, dispatchTargetId: F.target, clock: clock)
        let value = try signer.headerValue()

        let jws = try CompactJWS(parsing: value)
        #expect(jws.header.alg == "ES256")
        #expect(jws.header.kid == F.target)
        #expect(jws.header.typ == "JWT")
        let payload = try jws.verifiedPayload(with: key.publicKey)
        let object = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        #expect(Set(object.keys) == ["dispatchTargetId", "requestId", "creationTimeInEpochMillis"])
        #expect(object["dispatchTargetId"] as? String == F.target)
        #expect((object["creationTimeInEpochMillis"] as? NSNumber)?.int64Value == F.t0)
        let requestId = try #require(object["requestId"] as? String)
        #expect(requestId.count == 36 && requestId == requestId.lowercased())
        #expect(UUID(uuidString: requestId) != nil)

        let verifier = try F.verifier(key: key.publicKey, clock: clock)
        let verified = try verifier.verify(value).get()
        #expect(
            verified
                == VerifiedDeviceSignature(
                    dispatchTargetId: F.target, requestId: requestId,
                    creationTimeMillis: F.t0, serverTimeMillis: F.t0))
    }

    @Test func protectedHeaderIsExactlyTheProfileHeader() throws {
        let key = try F.fixtureKey()
        let signer = try DeviceSignatureSigner(
            key: key, dispatchTargetId: F.target, clock: ManualWallClock(millis: F.t0))
        let header = try #require(F.base64url(F.parts(try signer.headerValue())[0]))
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"ES256","kid":"\#(F.target)","typ":"JWT"}"#)
    }

    @Test func everyCallHasANewRequestIdAndSignature() throws {
        let key = try F.fixtureKey()
        let signer = try DeviceSignatureSigner(
            key: key, dispatchTargetId: F.target, clock: ManualWallClock(millis: F.t0))
        var requestIds = Set<String>()
        var signatures = Set<Substring>()
        let calls = 200
        for _ in 0..<calls {
            let value = try signer.headerValue()
            requestIds.insert(try #require(try F.payloadObject(value)["requestId"] as? String))
            signatures.insert(F.parts(value)[2])
        }
        #expect(requestIds.count == calls)
        #expect(signatures.count == calls)
    }

    @Test(arguments: [Int64(0), 5_000, -7_000, 61_000, -3_600_000])
    func offsetIsAddedToTheClock(offset: Int64) throws {
        let key = try F.fixtureKey()
        let clock = ManualWallClock(millis: F.t0)
        let signer = try DeviceSignatureSigner(key: key, dispatchTargetId: F.target, clock: clock)
        let value = try signer.headerValue(offsetMillis: offset)
        #expect((try F.payloadObject(value)["creationTimeInEpochMillis"] as? NSNumber)?.int64Value == F.t0 + offset)

        // A verifier whose clock is `offset` ahead of the device accepts the compensated value.
        let serverClock = ManualWallClock(millis: F.t0 + offset)
        let verifier = try F.verifier(key: key.publicKey, clock: serverClock, toleranceMillis: 0)
        #expect(try verifier.verify(value).get().skewMillis == 0)
    }

    @Test func offsetThatOverflowsIsRefused() throws {
        let key = try F.fixtureKey()
        let signer = try DeviceSignatureSigner(
            key: key, dispatchTargetId: F.target, clock: ManualWallClock(millis: F.t0))
        #expect(throws: DeviceSigningError(.timeOutOfRange, "")) { try signer.headerValue(offsetMillis: .max) }
        let early = try DeviceSignatureSigner(key: key, dispatchTargetId: F.target, clock: ManualWallClock(millis: -1))
        #expect(throws: DeviceSigningError(.timeOutOfRange, "")) { try early.headerValue(offsetMillis: .min) }
    }

    @Test func clockIsReadOnEveryCall() throws {
        let key = try F.fixtureKey()
        let clock = ManualWallClock(millis: F.t0)
        let signer = try DeviceSignatureSigner(key: key, dispatchTargetId: F.target, clock: clock)
        _ = try signer.headerValue()
        clock.advance(byMillis: 1234)
        #expect(
            (try F.payloadObject(try signer.headerValue())["creationTimeInEpochMillis"] as? NSNumber)?.int64Value == F
                .t0 + 1234)
    }

    static let awkwardIds: [String] = [
        #"quote " and backslash \ and slash /"#,
        "non-ASCII é ß 日本 and astral 🔑𝄞",
        "DEL \u{7F} needs no escape in JSON",
        "line separators \u{2028}\u{2029}",
        String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) }),  // every C0 control character
    ]

    @Test(arguments: awkwardIds)
    func requestIdIsEscapedSoThatJSONSerializationReadsItBack(requestId: String) throws {
        let key = try F.fixtureKey()
        let signer = try DeviceSignatureSigner(
            key: key, dispatchTargetId: F.target, clock: ManualWallClock(millis: F.t0)
        ) { requestId }
        let value = try signer.headerValue()
        let object = try F.payloadObject(value)
        let decoded = try #require(object["requestId"] as? String)
        #expect(Array(decoded.unicodeScalars) == Array(requestId.unicodeScalars))
        // The verifier reads it back too.
        let verifier = try F.verifier(key: key.publicKey, clock: ManualWallClock(millis: F.t0))
        #expect(try verifier.verify(value).get().requestId.unicodeScalars.elementsEqual(requestId.unicodeScalars))
    }

    @Test(arguments: [
        #"target "quoted" \ back/slash"#, "é ß 日本 🔑", String(repeating: "x", count: 256),
        String(repeating: "🔑", count: 128),
    ])
    func dispatchTargetIdIsEscapedInHeaderAndPayload(id: String) throws {
        let key = try F.fixtureKey()
        let signer = try DeviceSignatureSigner(key: key, dispatchTargetId: id, clock: ManualWallClock(millis: F.t0))
        let value = try signer.headerValue()
        let headerData = try #require(F.base64url(F.parts(value)[0]))
        let header = try #require(try JSONSerialization.jsonObject(with: headerData) as? [String: Any])
        #expect(header["kid"] as? String == id)
        #expect(header.count == 3)
        #expect(try F.payloadObject(value)["dispatchTargetId"] as? String == id)
        let verifier = try F.verifier(key: key.publicKey, targets: [id], clock: ManualWallClock(millis: F.t0))
        #expect(try verifier.verify(value).get().dispatchTargetId == id)
    }

    @Test(arguments: [
        "", String(repeating: "x", count: 257), String(repeating: "🔑", count: 129),
        "nul\u{0}", "line\nbreak", "tab\t", "del\u{7F}", "c1\u{85}",
    ])
    func invalidDispatchTargetIdIsRefused(id: String) throws {
        let key = try F.fixtureKey()
        #expect(throws: DeviceSigningError(.invalidDispatchTargetId, "")) {
            try DeviceSignatureSigner(key: key, dispatchTargetId: id, clock: ManualWallClock(millis: F.t0))
        }
    }

    @Test func requestIdOfSixtyFourIsSignedAndLongerOrEmptyIsRefused() throws {
        let key = try F.fixtureKey()
        let clock = ManualWallClock(millis: F.t0)
        let longest = String(repeating: "r", count: 64)
        let ok = try DeviceSignatureSigner(key: key, dispatchTargetId: F.target, clock: clock) { longest }
        #expect(try F.payloadObject(try ok.headerValue())["requestId"] as? String == longest)

        for bad in [String(repeating: "r", count: 65), String(repeating: "🔑", count: 33), ""] {
            let signer = try DeviceSignatureSigner(key: key, dispatchTargetId: F.target, clock: clock) { bad }
            #expect(throws: DeviceSigningError(.invalidRequestId, ""), "request id of \(bad.utf16.count) UTF-16 units")
            {
                try signer.headerValue()
            }
        }
    }

    @Test func randomRequestIdIsALowercaseVersion4UUID() throws {
        var seen = Set<String>()
        for _ in 0..<10_000 {
            let id = DeviceSignatureSigner.randomRequestId()
            let uuid = try #require(UUID(uuidString: id), "\(id)")
            #expect(id == uuid.uuidString.lowercased())
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 4, "version nibble of \(id)")
            #expect(bytes[8] >> 6 == 0b10, "variant bits of \(id)")
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
    }

    /// Every one of the 122 random bits varies (a stuck bit would show as constant).
    @Test func randomRequestIdUsesAllRandomBits() throws {
        var ones = [Int](repeating: 0, count: 128)
        let samples = 2_000
        for _ in 0..<samples {
            let uuid = try #require(UUID(uuidString: DeviceSignatureSigner.randomRequestId()))
            withUnsafeBytes(of: uuid.uuid) { bytes in
                for bit in 0..<128 where bytes[bit / 8] & (0x80 >> UInt8(bit % 8)) != 0 { ones[bit] += 1 }
            }
        }
        let fixedBits: Set = [48, 49, 50, 51, 64, 65]
        for bit in 0..<128 where !fixedBits.contains(bit) {
            #expect(
                (samples / 4)...(samples * 3 / 4) ~= ones[bit], "bit \(bit) was set \(ones[bit]) times in \(samples)")
        }
        #expect([48, 49, 50, 51, 64, 65].map { ones[$0] } == [0, samples, 0, 0, samples, 0])
    }
}

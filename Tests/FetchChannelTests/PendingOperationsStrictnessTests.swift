import DeviceSigning
import Foundation
import Testing

@testable import FetchChannel

/// `PendingOperationsDecoder` on the package's strict JSON reader (`StrictJSON.parse`, tested in
/// DeviceSigningTests): the reader's rules hold inside an operations answer.
@Suite struct PendingOperationsStrictnessTests {
    private func answer(creation: String = "1", extra: String = "", data: String = "null") -> String {
        #"{"operations":[{"creationTimeInEpochMillis":\#(creation),"dispatchChannel":"link",\#(extra)"#
            + #""payload":{"contentType":"c","version":"1","redeemData":{"token":"t","redeemUrl":"u"},"#
            + #""data":\#(data)}}]}"#
    }

    @Test(arguments: [
        #""dispatchChannel":"png-qr-code","#,
        #""creationTimeInEpochMillis":2,"#,
    ])
    func duplicateMembersSpoilTheAnswer(extra: String) {
        #expect(throws: PendingOperationsDecoder.InvalidResponse.self) {
            try PendingOperationsDecoder.decode(Data(answer(extra: extra).utf8), server: "s")
        }
    }

    /// Known names are recognised by their bytes when they have no escapes, and as strings when
    /// they do: an escaped spelling is the name it spells, and beside the plain one a duplicate.
    @Test func escapedNamesAreTheNamesTheySpell() throws {
        let escaped = answer().replacingOccurrences(of: #""token""#, with: #""tok\u0065n""#)
        let operations = try PendingOperationsDecoder.decode(Data(escaped.utf8), server: "s")
        #expect(operations.map(\.token) == ["t"])
        #expect(throws: PendingOperationsDecoder.InvalidResponse.self) {
            try PendingOperationsDecoder.decode(
                Data(answer(extra: #""dispatch\u0043hannel":"link","#).utf8), server: "s")
        }
        let unknownTwice = answer(extra: #""x":1,"\u0078":2,"#)
        #expect(throws: PendingOperationsDecoder.InvalidResponse.self) {
            try PendingOperationsDecoder.decode(Data(unknownTwice.utf8), server: "s")
        }
    }

    @Test(arguments: ["1.0", "1e3", "9223372036854775808", "-9223372036854775809", "\"1\"", "true"])
    func creationTimeMustBeA64BitInteger(creation: String) {
        #expect(throws: PendingOperationsDecoder.InvalidResponse.self) {
            try PendingOperationsDecoder.decode(Data(answer(creation: creation).utf8), server: "s")
        }
    }

    @Test func dataIsKeptExactlyAndItsDepthIsBounded() throws {
        let data = #"{"n":9007199254740993,"x":[1e2]}"#
        let kept = try PendingOperationsDecoder.decode(Data(answer(data: data).utf8), server: "s")
        let expected = JSONValue.object(["n": .integer(9_007_199_254_740_993), "x": .array([.number(100)])])
        #expect(kept.first?.payload.data == expected)
        let absent = try PendingOperationsDecoder.decode(Data(answer().utf8), server: "s")
        #expect(absent.first?.payload.data == nil, "null is absent")
        let depth = StrictJSON.Limits.standard.maximumDepth
        let tooDeep = answer(data: String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
        #expect(throws: PendingOperationsDecoder.InvalidResponse.self) {
            try PendingOperationsDecoder.decode(Data(tooDeep.utf8), server: "s")
        }
    }

    /// A token over 1 KiB or a redeem URL over 8 KiB spoils the answer; at the limits it is kept.
    @Test func aTokenOrRedeemURLOverItsLimitSpoilsTheAnswer() throws {
        func answer(token: String, redeemUrl: String) -> Data {
            Data(
                self.answer().replacingOccurrences(of: #""token":"t""#, with: #""token":"\#(token)""#)
                    .replacingOccurrences(of: #""redeemUrl":"u""#, with: #""redeemUrl":"\#(redeemUrl)""#).utf8)
        }
        let token = String(repeating: "t", count: 1_024)
        let url = "https://b/" + String(repeating: "u", count: 8_192 - 10)
        let kept = try PendingOperationsDecoder.decode(answer(token: token, redeemUrl: url), server: "s")
        #expect(kept.map(\.token) == [token])
        for (body, words) in [
            (answer(token: token + "t", redeemUrl: url), "operations[0].payload.redeemData.token is longer than 1024"),
            (
                answer(token: token, redeemUrl: url + "u"),
                "operations[0].payload.redeemData.redeemUrl is longer than 8192"
            ),
        ] {
            let error = #expect(throws: PendingOperationsDecoder.InvalidResponse.self) {
                try PendingOperationsDecoder.decode(body, server: "s")
            }
            #expect(error?.reason.contains(words) == true, "\(String(describing: error))")
        }
    }

    @Test func trailingBytesAndBadUTF8SpoilTheAnswer() {
        // Text after the object; a byte after it that is not UTF-8; U+FFFD (EF BF BD) made EF BF FF in `data`.
        let bodies: [[UInt8]] = [
            Array((answer() + "x").utf8), Array(answer().utf8) + [0xFF],
            Array(answer(data: "\"\u{FFFD}\"").utf8).map { $0 == 0xBD ? 0xFF : $0 },
        ]
        for body in bodies {
            #expect(throws: PendingOperationsDecoder.InvalidResponse.self) {
                try PendingOperationsDecoder.decode(Data(body), server: "s")
            }
        }
    }
}

/// The streaming answer reader against the answer rules checked on a finished value tree (the
/// decoder before it read while parsing): the same operations, or the same reason, on seeded
/// variations of an answer: members dropped, retyped, nulled, repeated, nested or reordered.
/// (A test of the change that made the reader stream; it fails on a reader that checks less.)
@Suite struct PendingOperationsReaderEquivalenceTests {
    @Test func readerAgreesWithTheTreeCheckOnVariations() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["ANSWER_READER_SEED"] ?? "") ?? 0x0A_5EED
        print("PendingOperationsReaderEquivalenceTests seed \(seed) (ANSWER_READER_SEED to replay)")
        var random = SplitMix64(seed: seed)
        var rejected = 0
        for round in 0..<3_000 {
            let text = Self.variation(&random)
            let streamed = Self.outcome { () throws(PendingOperationsDecoder.InvalidResponse) in
                try PendingOperationsDecoder.decode(Data(text.utf8), server: "s")
            }
            let tree = Self.outcome { () throws(PendingOperationsDecoder.InvalidResponse) in
                try TreeAnswerCheck.decode(Data(text.utf8), server: "s")
            }
            #expect(Self.comparable(streamed) == Self.comparable(tree), "round \(round) seed \(seed): \(text)")
            if case .failure = streamed { rejected += 1 }
        }
        #expect(rejected > 300 && rejected < 2_700, "the variations cover both outcomes: \(rejected) rejected")
    }

    /// Text that is not JSON is refused by both; when it has two faults (duplicates in two nested
    /// objects) they may name different ones: the tree found the inner one first.
    private static func comparable(
        _ outcome: Result<[PendingOutOfBandOperation], PendingOperationsDecoder.InvalidResponse>
    )
        -> Result<[PendingOutOfBandOperation], PendingOperationsDecoder.InvalidResponse>
    {
        guard case .failure(let reason) = outcome, reason.reason.hasPrefix("The answer is not valid JSON") else {
            return outcome
        }
        return .failure(PendingOperationsDecoder.InvalidResponse("The answer is not valid JSON."))
    }

    private static func outcome(
        _ body: () throws(PendingOperationsDecoder.InvalidResponse) -> [PendingOutOfBandOperation]
    ) -> Result<[PendingOutOfBandOperation], PendingOperationsDecoder.InvalidResponse> {
        do throws(PendingOperationsDecoder.InvalidResponse) {
            return .success(try body())
        } catch {
            return .failure(error)
        }
    }

    /// An answer of 0 to 3 operations, each member possibly changed.
    private static func variation(_ random: inout SplitMix64) -> String {
        func pick<T>(_ options: [T]) -> T { options[Int.random(in: 0..<options.count, using: &random)] }
        func value(_ normal: String) -> String {
            Int.random(in: 0..<8, using: &random) > 0
                ? normal : pick(["null", "1", "1.5", "\"x\"", "\"\"", "[]", "{}", #"{"a":[1,{"b":2}]}"#, "true"])
        }
        func object(_ members: [(String, String)]) -> String {
            var kept = members.filter { _ in Int.random(in: 0..<12, using: &random) > 0 }
            if Int.random(in: 0..<6, using: &random) == 0 {
                kept.append(pick([("x", "1"), ("data", "{}"), ("y", #"[{"z":1,"z":2}]"#), ("w", #"{"v":[]}"#)]))
            }
            if Int.random(in: 0..<30, using: &random) == 0, let first = kept.first { kept.append(first) }
            if Int.random(in: 0..<4, using: &random) == 0 { kept.reverse() }
            return "{" + kept.map { "\"\($0.0)\":\(value($0.1))" }.joined(separator: ",") + "}"
        }
        let count = Int.random(in: 0..<4, using: &random)
        let operations = (0..<count).map { index in
            object([
                ("creationTimeInEpochMillis", pick(["\(index)", "-5", "9007199254740993", "1e3"])),
                ("dispatchChannel", pick([#""link""#, #""sms""#])),
                (
                    "payload",
                    object([
                        ("contentType", #""application\/json""#), ("version", #""1""#),
                        (
                            "redeemData",
                            object([
                                ("token", pick([#""t\#(index)""#, #""t""#, #""""#])), ("redeemUrl", #""https://b/r""#),
                            ])
                        ),
                        ("data", pick(["null", #"{"k":[1,2.5,"s"]}"#, "7"])),
                    ])
                ),
                ("additionalInformation", pick(["null", #"{"operation":"authentication"}"#, "[]"])),
            ])
        }
        let list =
            Int.random(in: 0..<20, using: &random) == 0
            ? pick(["null", "{}", "3"]) : "[\(operations.joined(separator: ","))]"
        return Int.random(in: 0..<25, using: &random) == 0 ? "[\(list)]" : object([("operations", list)])
    }
}

/// The answer rules on a value tree (`StrictJSON.parse`), as the decoder checked them before it
/// read the answer while parsing it.
private enum TreeAnswerCheck {
    typealias InvalidResponse = PendingOperationsDecoder.InvalidResponse

    static func decode(_ body: Data, server: String) throws(InvalidResponse) -> [PendingOutOfBandOperation] {
        let root: JSONValue
        do throws(StrictJSON.Violation) {
            root = try StrictJSON.parse(body)
        } catch {
            throw InvalidResponse("The answer is not valid JSON: \(error).")
        }
        guard case .object(let members) = root else { throw InvalidResponse("The answer is not a JSON object.") }
        guard case .array(let elements) = try required(members, "operations", in: nil) else {
            throw wrongType("operations", "an array")
        }
        var operations: [PendingOutOfBandOperation] = []
        for (index, element) in elements.enumerated() {
            operations.append(try operation(element, path: "operations[\(index)]", server: server))
        }
        return operations
    }

    private static func operation(_ value: JSONValue, path: String, server: String)
        throws(InvalidResponse) -> PendingOutOfBandOperation
    {
        guard case .object(let members) = value else { throw wrongType(path, "an object") }
        guard case .integer(let creation) = try required(members, "creationTimeInEpochMillis", in: path) else {
            throw wrongType(path + ".creationTimeInEpochMillis", "an integer")
        }
        let channel = try string(members, "dispatchChannel", in: path)
        let payloadPath = path + ".payload"
        guard case .object(let payload) = try required(members, "payload", in: path) else {
            throw wrongType(payloadPath, "an object")
        }
        let contentType = try string(payload, "contentType", in: payloadPath)
        let version = try string(payload, "version", in: payloadPath)
        let redeemPath = payloadPath + ".redeemData"
        guard case .object(let redeemData) = try required(payload, "redeemData", in: payloadPath) else {
            throw wrongType(redeemPath, "an object")
        }
        let token = try string(redeemData, "token", in: redeemPath)
        guard !token.isEmpty else { throw InvalidResponse("\(redeemPath).token is empty.") }
        let redeemUrl = try string(redeemData, "redeemUrl", in: redeemPath)
        if token.utf8.count > 1_024 { throw InvalidResponse("\(redeemPath).token is longer than 1024 bytes.") }
        if redeemUrl.utf8.count > 8_192 {
            throw InvalidResponse("\(redeemPath).redeemUrl is longer than 8192 bytes.")
        }
        return PendingOutOfBandOperation(
            creationTimeInEpochMillis: creation, dispatchChannel: DispatchChannel(wireValue: channel),
            payload: .init(
                contentType: contentType, version: version,
                redeemData: .init(token: token, redeemUrl: redeemUrl),
                data: payload["data"] == .null ? nil : payload["data"]),
            additionalInformation: members["additionalInformation"] == .null ? nil : members["additionalInformation"],
            server: server)
    }

    private static func required(_ members: [String: JSONValue], _ name: String, in path: String?)
        throws(InvalidResponse) -> JSONValue
    {
        guard let value = members[name], value != .null else {
            throw InvalidResponse("\(path.map { $0 + "." } ?? "")\(name) is missing.")
        }
        return value
    }

    private static func string(_ members: [String: JSONValue], _ name: String, in path: String)
        throws(InvalidResponse) -> String
    {
        guard case .string(let text) = try required(members, name, in: path) else {
            throw wrongType(path + "." + name, "a string")
        }
        return text
    }

    private static func wrongType(_ path: String, _ expected: String) -> InvalidResponse {
        InvalidResponse("\(path) has the wrong type; \(expected) was expected.")
    }
}

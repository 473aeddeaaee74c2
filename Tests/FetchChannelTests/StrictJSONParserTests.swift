import Foundation
import Testing

@testable import FetchChannel

/// `StrictJSONParser`, the parser of the operations answer: exactly RFC 8259 over UTF-8, no
/// duplicate member names, bounded depth, exact integers; and `PendingOperationsDecoder` on it.
@Suite struct StrictJSONParserTests {
    private func parse(_ text: String) -> Result<JSONValue, StrictJSONParser.Failure> {
        parse(Array(text.utf8))
    }

    private func parse(_ bytes: [UInt8]) -> Result<JSONValue, StrictJSONParser.Failure> {
        do throws(StrictJSONParser.Failure) {
            return .success(try StrictJSONParser.parse(bytes))
        } catch {
            return .failure(error)
        }
    }

    private func isNotJSON(_ result: Result<JSONValue, StrictJSONParser.Failure>) -> Bool {
        if case .failure(.notJSON) = result { true } else { false }
    }

    @Test func valuesAreReadExactly() throws {
        let text =
            #" {"i":-12,"z":-0,"max":9223372036854775807,"min":-9223372036854775808,"big":9223372036854775808,"#
            + #""f":2.5,"e":-1.25E+2,"t":true,"n":null,"s":"a\"\\\/\b\f\n\r\t\u00e9\ud83d\udd11é","a":[[],{}]} "#
        let value = try parse(text).get()
        #expect(
            value
                == .object([
                    "i": .integer(-12), "z": .integer(0), "max": .integer(.max), "min": .integer(.min),
                    "big": .number(9_223_372_036_854_775_808), "f": .number(2.5), "e": .number(-125), "t": .bool(true),
                    "n": .null, "s": .string("a\"\\/\u{08}\u{0C}\n\r\té🔑é"), "a": .array([.array([]), .object([:])]),
                ]))
        #expect(try parse("9007199254740993").get() == .integer(9_007_199_254_740_993), "above 2^53, still exact")
        #expect(try parse(#""just a string""#).get() == .string("just a string"))
    }

    @Test(arguments: [
        #"{"alg":"none","alg":"ES256"}"#,
        #"{"\u0061lg":"none","alg":"ES256"}"#,
        #"{"a\/b":1,"a/b":2}"#,
        #"{"\ud83d\udd11":1,"🔑":2}"#,
        #"{"é":1,"\u00e9":2}"#,
        "{\"\u{E9}\":1,\"e\u{301}\":2}",
        #"{"a":{"x":1,"x":2}}"#,
        #"[{"x":1},{"y":1,"y":2}]"#,
        #"{"a":[1,2,{"b":{"c":[{"d":1,"d":1}]}}]}"#,
    ])
    func duplicateMemberNamesAreRefusedAtEveryDepth(json: String) {
        guard case .failure(.duplicateMemberName(let name, _)) = parse(json) else {
            Issue.record("\(json): not refused as a duplicate: \(parse(json))")
            return
        }
        #expect(!name.isEmpty)
    }

    @Test func sameNamesInSeparateObjectsAreFine() throws {
        let one = JSONValue.object(["x": .integer(1)])
        #expect(try parse(#"{"a":{"x":1},"b":{"x":1}}"#).get() == .object(["a": one, "b": one]))
        #expect(try parse(#"[{"x":1},{"x":2}]"#).get() == .array([one, .object(["x": .integer(2)])]))
    }

    @Test(arguments: [
        "", " ", "{", "}", "[", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, "[1,]", "[1 2]", #"{"a":1 "b":2}"#,
        "{'a':1}", #"{a:1}"#, "tru", "nul", "True", "[1]x", #"{"a":1}{"a":1}"#, #"{"a":1} /* c */"#,
        #"{"a":"\x"}"#, #"{"a":"\u12"}"#, "{\"a\":\"line\nbreak\"}", "{\"a\":\"tab\there\"}", #""\ud800""#,
        #""\udc00""#, #""\ud800\u0041""#, #""unterminated"#, "\u{FEFF}{}",
    ])
    func textThatIsNotJSONIsRefused(json: String) {
        #expect(isNotJSON(parse(json)), "\(json.debugDescription): \(parse(json))")
    }

    @Test(arguments: [
        "01", "-01", "1.", ".5", "-", "1e", "1e+", "+1", "NaN", "Infinity", "-Infinity", "0x10", "1.5.2", "1_000",
    ])
    func badNumbersAreRefused(number: String) {
        #expect(isNotJSON(parse(number)), "\(number): \(parse(number))")
        #expect(isNotJSON(parse(#"{"n":\#(number)}"#)), "\(number) in an object")
    }

    @Test func numbersBeyondDoubleAreRefused() {
        for number in ["1e400", "-1e400", String(repeating: "9", count: 400) + ".0"] {
            guard case .failure(.numberOutOfRange) = parse(number) else {
                Issue.record("\(number.prefix(20))…: \(parse(number))")
                continue
            }
        }
        #expect((try? parse("1e-400").get()) == .number(0), "an underflow is a number, as Double reads it")
    }

    @Test func malformedUTF8IsRefused() throws {
        // A stray 0xFF; a truncated two-byte sequence; an encoded surrogate (ED A0 80); an overlong "/"
        // (C0 AF); 0xFF outside any string.
        let invalid: [[UInt8]] = [
            [0x22, 0xFF, 0x22], [0x7B, 0x22, 0xC3, 0x22, 0x3A, 0x31, 0x7D], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x22, 0xC0, 0xAF, 0x22], [0x5B, 0x31, 0x5D, 0xFF], [0x22, 0x5C, 0x6E, 0xC3, 0x22],
        ]
        for bytes in invalid {
            #expect(isNotJSON(parse(bytes)), "\(bytes)")
        }
        #expect(try parse([0x22, 0xC3, 0xA9, 0x5C, 0x6E, 0x22]).get() == .string("é\n"))
    }

    @Test func nestingStopsAtTheLimit() throws {
        let limit = StrictJSONParser.maximumDepth
        let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect((try? parse(deepest).get()) != nil)
        for text in [
            String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1),
            String(repeating: #"{"a":"#, count: limit + 1) + "1" + String(repeating: "}", count: limit + 1),
            String(repeating: "[", count: 100_000),
        ] {
            guard case .failure(.tooDeep) = parse(text) else {
                Issue.record("depth \(text.count): \(parse(text))")
                continue
            }
        }
    }

    // The answer decoder on the parser: the same rules hold inside an operations answer.

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
        let depth = StrictJSONParser.maximumDepth
        let tooDeep = answer(data: String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
        #expect(throws: PendingOperationsDecoder.InvalidResponse.self) {
            try PendingOperationsDecoder.decode(Data(tooDeep.utf8), server: "s")
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

import DeviceSigning
import Foundation
import Testing

/// `StrictJSON`, the package's one JSON reader: `requireUniqueMemberNames` (the check before
/// Foundation decodes a text) and `parse` (the value tree of the operations answer).
@Suite struct StrictJSONTests {
    private func violation(_ text: String) -> StrictJSON.Violation? {
        do throws(StrictJSON.Violation) {
            try StrictJSON.requireUniqueMemberNames(Array(text.utf8))
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        #"{"alg":"none","alg":"ES256"}"#,
        #"{"\u0061lg":"none","alg":"ES256"}"#,
        #"{"alg":"none","\u0061\u006C\u0067":"ES256"}"#,
        #"{"a\/b":1,"a/b":2}"#,
        #"{"tab\t":1,"tab\u0009":2}"#,
        #"{"\ud83d\udd11":1,"🔑":2}"#,
        #"{"é":1,"\u00e9":2}"#,
        #"{ "alg" : 1 , "alg" : 2 }"#,
    ])
    func duplicateAfterUnescapingIsRefused(json: String) {
        guard case .duplicateMemberName(let name) = violation(json) else {
            Issue.record("\(json): not refused as a duplicate: \(String(describing: violation(json)))")
            return
        }
        #expect(!name.isEmpty)
    }

    /// Foundation keys its dictionaries by Swift string equality, which is canonical equivalence:
    /// "é" precomposed and "e" + combining acute would land on one key, so they are a duplicate.
    @Test func canonicallyEquivalentNamesAreADuplicate() {
        #expect(violation("{\"\u{E9}\":1,\"e\u{301}\":2}") == .duplicateMemberName("\u{E9}"))
    }

    @Test(arguments: [
        #"{"a":{"x":1,"x":2}}"#,
        #"[{"x":1},{"y":1,"y":2}]"#,
        #"{"a":[1,2,{"b":{"c":[{"d":1,"d":1}]}}]}"#,
    ])
    func duplicatesAreFoundAtEveryDepth(json: String) {
        #expect(violation(json).map { if case .duplicateMemberName = $0 { true } else { false } } == true, "\(json)")
    }

    @Test(arguments: [
        #"{"alg":"ES256","kid":"k","typ":"JWT"}"#,
        #"{"a":{"x":1},"b":{"x":1}}"#,
        #"[{"x":1},{"x":2}]"#,
        #"{"alg":"alg","x":["alg","alg"]}"#,
        #"{"a\"b":1,"a\\b":2,"ab":3}"#,
        #"{"A":1,"a":2,"a ":3}"#,
        #"{"s":"{\"x\":1,\"x\":2}"}"#,
        #"{"\ud800":1}"#,
        #"  {"n":-0.5e+10,"m":0,"t":true,"f":false,"z":null,"e":{},"l":[]}  "#,
        #""just a string""#,
        "12",
    ])
    func validJSONWithoutDuplicatesPasses(json: String) {
        #expect(violation(json) == nil, "\(json)")
    }

    @Test(arguments: [
        "", " ", "{", "}", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, "[1,]", "[1 2]", #"{"a":1 "b":2}"#,
        "{'a':1}", #"{a:1}"#, "01", "1.", ".5", "-", "1e", "+1", "tru", "nul", "NaN", "[1]x",
        #"{"a":"\x"}"#, #"{"a":"\u12"}"#, "{\"a\":\"line\nbreak\"}", #"{"a":1}/* c */"#,
        "\u{FEFF}{}", #"{"a":1}{"a":1}"#,
    ])
    func notJSONIsRefused(json: String) {
        let isNotJSON = violation(json).map { if case .notJSON = $0 { true } else { false } }
        #expect(isNotJSON == true, "\(json.debugDescription)")
    }

    @Test func invalidUTF8IsNotJSON() {
        // A stray 0xFF; a truncated two-byte sequence in a name; an encoded surrogate (ED A0 80).
        let invalid: [[UInt8]] = [
            [0x22, 0xFF, 0x22], [0x7B, 0x22, 0xC3, 0x22, 0x3A, 0x31, 0x7D], [0x22, 0xED, 0xA0, 0x80, 0x22],
        ]
        for bytes in invalid {
            #expect(throws: StrictJSON.Violation.self) { try StrictJSON.requireUniqueMemberNames(bytes) }
        }
    }

    /// Deep nesting is scanned without recursion.
    @Test func deepNestingDoesNotOverflowTheStack() {
        let depth = 100_000
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(violation(text) == nil)
        let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
        #expect(violation(objects) == nil)
    }

    /// The description shows the name shortened and without control characters.
    @Test func descriptionIsPrintable() {
        let name = "\u{1B}[31m" + String(repeating: "n", count: 200)
        let text = StrictJSON.Violation.duplicateMemberName(name).description
        #expect(!text.contains("\u{1B}"))
        #expect(text.count < 140)
    }

    /// Seeded differential check against Foundation: random JSON texts (with and without
    /// duplicates) are accepted by the scanner exactly when Foundation parses them and no object
    /// repeats a name.
    @Test func agreesWithFoundationOnRandomDocuments() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["STRICT_JSON_SEED"] ?? "") ?? 0x15_0B1E_C7
        print("StrictJSONTests seed \(seed) (STRICT_JSON_SEED to replay)")
        var random = SplitMix64(seed: seed)
        for round in 0..<2_000 {
            var duplicated = false
            let text = Self.randomValue(depth: 0, random: &random, duplicated: &duplicated)
            let data = Data(text.utf8)
            let parsed = (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil
            #expect(parsed, "round \(round) seed \(seed): Foundation refused \(text)")
            #expect((violation(text) == nil) == !duplicated, "round \(round) seed \(seed): \(text)")
        }
    }

    private static let names = ["a", "b", "\\u0061", "\\u0062", "c\\\"", "c\\u0022", "\\/", "/"]
    /// The names above, unescaped: equal indices here mean the same member name.
    private static let unescaped = ["a", "b", "a", "b", "c\"", "c\"", "/", "/"]

    private static func randomValue(depth: Int, random: inout SplitMix64, duplicated: inout Bool) -> String {
        let choice = depth > 4 ? Int.random(in: 0..<4, using: &random) : Int.random(in: 0..<6, using: &random)
        switch choice {
        case 0: return ["0", "-1", "2.5e-3", "1E+2", "-0.0"].randomElement(using: &random) ?? "0"
        case 1:
            let strings = [#""""#, #""x\"y""#, #""\u00e9\ud83d\udd11""#, #""{\"a\":1}""#]
            return strings.randomElement(using: &random) ?? #""""#
        case 2: return ["true", "false", "null"].randomElement(using: &random) ?? "null"
        case 3: return "[]"
        case 4:
            let count = Int.random(in: 0..<4, using: &random)
            let elements = (0..<count).map { _ in
                randomValue(depth: depth + 1, random: &random, duplicated: &duplicated)
            }
            return "[" + elements.joined(separator: ",") + "]"
        default:
            let count = Int.random(in: 0..<4, using: &random)
            var seen = Set<String>()
            var members: [String] = []
            for _ in 0..<count {
                let index = Int.random(in: 0..<names.count, using: &random)
                if !seen.insert(unescaped[index]).inserted { duplicated = true }
                let value = randomValue(depth: depth + 1, random: &random, duplicated: &duplicated)
                members.append("\"\(names[index])\" : " + value)
            }
            return "{" + members.joined(separator: ", ") + "}"
        }
    }

    // MARK: parse: exactly RFC 8259 over UTF-8, no duplicate member names, bounded depth, exact integers

    private func parse(_ text: String) -> Result<JSONValue, StrictJSON.Violation> {
        parse(Array(text.utf8))
    }

    private func parse(_ bytes: [UInt8]) -> Result<JSONValue, StrictJSON.Violation> {
        do throws(StrictJSON.Violation) {
            return .success(try StrictJSON.parse(bytes))
        } catch {
            return .failure(error)
        }
    }

    private func isNotJSON(_ result: Result<JSONValue, StrictJSON.Violation>) -> Bool {
        if case .failure(.notJSON) = result { true } else { false }
    }

    @Test func parseReadsValuesExactly() throws {
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
    func parseRefusesDuplicateMemberNamesAtEveryDepth(json: String) {
        guard case .failure(.duplicateMemberName(let name)) = parse(json) else {
            Issue.record("\(json): not refused as a duplicate: \(parse(json))")
            return
        }
        #expect(!name.isEmpty)
    }

    @Test func parseAcceptsSameNamesInSeparateObjects() throws {
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
    func parseRefusesTextThatIsNotJSON(json: String) {
        #expect(isNotJSON(parse(json)), "\(json.debugDescription): \(parse(json))")
    }

    @Test(arguments: [
        "01", "-01", "1.", ".5", "-", "1e", "1e+", "+1", "NaN", "Infinity", "-Infinity", "0x10", "1.5.2", "1_000",
    ])
    func parseRefusesBadNumbers(number: String) {
        #expect(isNotJSON(parse(number)), "\(number): \(parse(number))")
        #expect(isNotJSON(parse(#"{"n":\#(number)}"#)), "\(number) in an object")
    }

    @Test func parseRefusesNumbersBeyondDouble() {
        for number in ["1e400", "-1e400", String(repeating: "9", count: 400) + ".0"] {
            guard case .failure(.numberOutOfRange) = parse(number) else {
                Issue.record("\(number.prefix(20))…: \(parse(number))")
                continue
            }
        }
        #expect((try? parse("1e-400").get()) == .number(0), "an underflow is a number, as Double reads it")
    }

    @Test func parseRefusesMalformedUTF8() throws {
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

    @Test func parseStopsNestingAtTheLimit() throws {
        let limit = StrictJSON.Limits.standard.maximumDepth
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

    @Test func parseStopsAtTheSizeLimit() throws {
        let text = Array(#"["12345678"]"#.utf8)
        let exact = StrictJSON.Limits(maximumBytes: text.count)
        #expect(try StrictJSON.parse(text, limits: exact) == .array([.string("12345678")]))
        let smaller = StrictJSON.Limits(maximumBytes: text.count - 1)
        #expect(throws: StrictJSON.Violation.tooLarge(bytes: text.count, limit: text.count - 1)) {
            try StrictJSON.parse(text, limits: smaller)
        }
    }

    /// Long strings read again (names and values that repeat in every element) and long strings
    /// with escapes come out exactly, whatever was read before them.
    @Test func parseReadsRepeatedAndEscapedLongStringsExactly() throws {
        let escaped = #""https:\/\/backend.example\/r\u00e9deem\ud83d\udd11\n""#
        let unescaped = "https://backend.example/r\u{E9}deem🔑\n"
        let distinct = (0..<12).map { "\"distinct long string \($0)\"" }
        let elements =
            [#""a long string, twenty""#, escaped] + distinct + [escaped, #""a long string, twenty""#, escaped]
        let text = "[" + elements.joined(separator: ",") + "]"
        let expected =
            ["a long string, twenty", unescaped] + (0..<12).map { "distinct long string \($0)" }
            + [unescaped, "a long string, twenty", unescaped]
        #expect(try StrictJSON.parse(Array(text.utf8)) == .array(expected.map(JSONValue.string)))
        let names = #"[{"creationTimeInEpochMillis":1},{"creationTimeInEpochMillis":2,"creationTimeInEpochMillix":3}]"#
        #expect(
            try StrictJSON.parse(Array(names.utf8))
                == .array([
                    .object(["creationTimeInEpochMillis": .integer(1)]),
                    .object(["creationTimeInEpochMillis": .integer(2), "creationTimeInEpochMillix": .integer(3)]),
                ]))
    }

    /// Strings are scanned eight bytes at a time where they are plain ASCII: a quote, an escape, a
    /// control character or a non-ASCII byte is still found at every offset of such a run, as a
    /// value and as a member name.
    @Test func everyOffsetOfALongStringIsChecked() throws {
        for before in 0..<20 {
            for after in [0, 1, 7, 8, 9, 17] {
                let (head, tail) = (String(repeating: "a", count: before), String(repeating: "b", count: after))
                let cases: [(raw: String, expected: String?)] = [
                    (head + #"\n"# + tail, head + "\n" + tail),
                    (head + #"\""# + tail, head + "\"" + tail),
                    (head + "\u{E9}" + tail, head + "\u{E9}" + tail),
                    (head + "\u{1}" + tail, nil),
                    (head + "\"" + tail, nil),
                    (head + "\n" + tail, nil),
                ]
                for (raw, expected) in cases {
                    let value = try? StrictJSON.parse(Array("[\"\(raw)\"]".utf8))
                    #expect(
                        value == expected.map { .array([.string($0)]) }, "\(before) \(after) \(raw.debugDescription)")
                    let member = try? StrictJSON.parse(Array("{\"\(raw)\":1}".utf8))
                    #expect(member == expected.map { .object([$0: .integer(1)]) }, "\(before) \(after)")
                }
                let unterminated = try? StrictJSON.parse(Array("[\"\(head)\(tail)".utf8))
                #expect(unterminated == nil)
            }
        }
    }
}

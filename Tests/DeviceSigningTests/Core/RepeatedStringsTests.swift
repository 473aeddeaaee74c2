import Testing

@testable import DeviceSigning

@Suite("RepeatedStrings")
struct RepeatedStringsTests {
    private static func text(_ strings: inout RepeatedStrings, _ raw: String) -> String? {
        Array(raw.utf8).withUnsafeBytes { strings.text(for: $0) }
    }

    private static func remember(_ strings: inout RepeatedStrings, _ raw: String) {
        Array(raw.utf8).withUnsafeBytes { strings.remember($0, as: raw) }
    }

    @Test("a string read again is found; one never read is not; same length is not enough")
    func findsOnlyTheSameBytes() {
        var strings = RepeatedStrings()
        Self.remember(&strings, "creationTimeInEpochMillis")
        #expect(Self.text(&strings, "creationTimeInEpochMillis") == "creationTimeInEpochMillis")
        #expect(Self.text(&strings, "creationTimeInEpochMilliz") == nil)
        #expect(Self.text(&strings, "additionalInformation") == nil)
    }

    /// An array of operations: each has a unique token between the names every operation repeats.
    /// Round-robin replacement would let the tokens push the repeated names out in turn.
    @Test("unique strings do not push out the ones that repeat")
    func uniqueStringsDoNotEvictRepeatedOnes() {
        var strings = RepeatedStrings()
        let repeated = ["creationTimeInEpochMillis", "additionalInformation", "firebase-cloud-messaging"]
        for name in repeated { Self.remember(&strings, name) }
        for operation in 0..<50 {
            for name in repeated { #expect(Self.text(&strings, name) == name, "operation \(operation)") }
            let token = "token-\(operation)-0123456789abcdef"
            #expect(Self.text(&strings, token) == nil)
            Self.remember(&strings, token)
        }
    }

    @Test("more unique strings than entries: the newest are found, all answers are exact")
    func manyUniqueStrings() {
        var strings = RepeatedStrings()
        let all = (0..<40).map { "unique-string-number-\($0)" }
        for text in all { Self.remember(&strings, text) }
        #expect(Self.text(&strings, all[39]) == all[39])
        for text in all { #expect(Self.text(&strings, text).map { $0 == text } ?? true) }
    }
}

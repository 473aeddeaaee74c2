import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelVectors

/// A member of a vector file that no checker reads leaves its case checking less than it says,
/// and `JSONDecoder` skips it without a word: every file is refused for one, at any depth, with
/// the member's path (``UnreadVectorMembers``).
@Suite struct UnreadVectorMembersTests {
    static let fileNames = VectorSuite.checkers.map(\.fileName)

    static func data(_ fileName: String) throws -> Data {
        try Data(contentsOf: PackageLocations.vectors.appendingPathComponent(fileName))
    }

    /// The file's JSON with `member` added to the top-level object and to the first object of
    /// the first array that holds objects (a case or a row).
    static func adding(_ member: String, value: Any, to data: Data) throws -> (top: Data, inCase: Data?) {
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var top = object
        top[member] = value
        var inCase: Data?
        for (name, element) in object.sorted(by: { $0.key < $1.key }) {
            guard var cases = element as? [Any], var first = cases.first as? [String: Any] else { continue }
            first[member] = value
            cases[0] = first
            var changed = object
            changed[name] = cases
            inCase = try JSONSerialization.data(withJSONObject: changed)
            break
        }
        return (try JSONSerialization.data(withJSONObject: top), inCase)
    }

    @Test(arguments: fileNames)
    func aMemberNoCheckerReadsIsRefused(fileName: String) throws {
        let original = try Self.data(fileName)
        #expect(VectorSuite.check(fileName: fileName, data: original).passed, "the file as it is passes")
        let (top, inCase) = try Self.adding("expectedEror", value: "x", to: original)
        let topReport = VectorSuite.check(fileName: fileName, data: top)
        #expect(topReport.failures == ["\(fileName) cannot be read: a member no checker reads at expectedEror"])
        let caseData = try #require(inCase, "the file has a list of cases")
        let caseReport = VectorSuite.check(fileName: fileName, data: caseData)
        #expect(caseReport.failures.count == 1, "\(caseReport.failures)")
        #expect(
            caseReport.failures.first?.contains(#"[0].expectedEror"#) == true,
            "the path names the case: \(caseReport.failures)")
    }

    /// Members that only explain are allowed, as strings; the same name holding anything else
    /// is not prose and is refused.
    @Test func anExplanatoryMemberMustBeAString() throws {
        let original = try Self.data("jws-es256.json")
        let (prose, _) = try Self.adding("comment", value: "why this file exists", to: original)
        #expect(VectorSuite.check(fileName: "jws-es256.json", data: prose).passed)
        let (number, _) = try Self.adding("comment", value: 1, to: original)
        #expect(
            VectorSuite.check(fileName: "jws-es256.json", data: number).failures
                == ["jws-es256.json cannot be read: a member no checker reads at comment"])
    }

    /// The walk goes into maps too: a member of a named key that nothing reads is refused.
    @Test func aMemberOfAMapEntryIsRefused() throws {
        let fileName = JWEVectors.fileName
        var object = try #require(try JSONSerialization.jsonObject(with: try Self.data(fileName)) as? [String: Any])
        var keys = try #require(object["keys"] as? [String: Any])
        let name = try #require(keys.keys.sorted().first)
        var key = try #require(keys[name] as? [String: Any])
        key["expectedEror"] = "x"
        keys[name] = key
        object["keys"] = keys
        let report = VectorSuite.check(fileName: fileName, data: try JSONSerialization.data(withJSONObject: object))
        #expect(
            report.failures == ["\(fileName) cannot be read: a member no checker reads at keys.\(name).expectedEror"])
    }

    /// Prose is for the file and its cases; inside what a case expects it is a member that checks
    /// nothing, and is refused.
    @Test func proseInsideWhatACaseExpectsIsRefused() throws {
        let fileName = ErrorMappingVectors.fileName
        var object = try #require(try JSONSerialization.jsonObject(with: try Self.data(fileName)) as? [String: Any])
        var rows = try #require(object["rows"] as? [Any])
        var row = try #require(rows.first as? [String: Any])
        var expected = try #require(row["expected"] as? [String: Any])
        expected["reason"] = "why this row expects what it does"
        row["expected"] = expected
        rows[0] = row
        object["rows"] = rows
        let report = VectorSuite.check(fileName: fileName, data: try JSONSerialization.data(withJSONObject: object))
        #expect(report.failures == ["\(fileName) cannot be read: a member no checker reads at rows[0].expected.reason"])
    }

    /// A clock-skew policy object reads only `compensate`; anything beside it is refused by the
    /// policy itself, which the walk does not look inside.
    @Test func aPolicyRefusesAMemberBesideCompensate() throws {
        let text = String(decoding: try Self.data(ClockSkewVectors.fileName), as: UTF8.self)
        let policy = try #require(text.range(of: #"{"compensate":"#), "the table has a compensating row")
        let mutated = Data(text.replacingCharacters(in: policy, with: #"{"compensat":0,"compensate":"#).utf8)
        let report = VectorSuite.check(fileName: ClockSkewVectors.fileName, data: mutated)
        #expect(report.failures.count == 1, "\(report.failures)")
        #expect(report.failures.first?.contains("compensat") == true, "\(report.failures)")
    }

    /// The case signed with another key must verify with `otherKey`: its refusal then comes from
    /// the key alone, not from a garbled signature.
    @Test func theOtherKeyCaseMustVerifyWithOtherKey() throws {
        let fileName = DeviceSignatureVectors.fileName
        var object = try #require(try JSONSerialization.jsonObject(with: try Self.data(fileName)) as? [String: Any])
        var otherKey = try #require(object["otherKey"] as? [String: Any])
        let key = try #require(object["key"] as? [String: Any])
        otherKey["x"] = key["x"]
        otherKey["y"] = key["y"]
        object["otherKey"] = otherKey
        let report = VectorSuite.check(fileName: fileName, data: try JSONSerialization.data(withJSONObject: object))
        #expect(
            report.failures.contains { $0.hasPrefix("signature-by-another-key: its signature does not verify") },
            "\(report.failures)")
    }
}

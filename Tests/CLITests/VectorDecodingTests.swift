import Foundation
import Testing

@testable import FetchChannelVectors

/// A vector file that cannot be read fails with a code for the kind of problem and a reason that
/// names the JSON path (docs/ARCHITECTURE.md, "Errors").
@Suite struct VectorDecodingTests {
    struct Sample: Decodable {
        let id: Int
    }

    func failure(_ text: String) -> VectorDecodingError? {
        guard case .failure(let error) = VectorDecoding.decode(Sample.self, from: Data(text.utf8)) else { return nil }
        return error
    }

    @Test func eachProblemHasItsCode() {
        #expect(failure("not json")?.code == .notJSON)
        #expect(failure("{}")?.code == .missingMember)
        #expect(failure(#"{"id":"one"}"#)?.code == .wrongType)
        #expect(failure(#"{"id":1}"#) == nil)
    }

    /// `JSONDecoder` keeps the first of two members of one name, `JSONSerialization` the last: a
    /// duplicate at any depth, even in a member nothing decodes, is refused before decoding.
    @Test func aDuplicateMemberIsRefusedNamingIt() {
        for (text, name) in [(#"{"id":1,"id":2}"#, "id"), (#"{"id":1,"extra":[{"a":1,"\u0061":2}]}"#, "a")] {
            let error = failure(text)
            #expect(error?.code == .duplicateMember, "\(text)")
            #expect(error?.reason == "the member \"\(name)\" appears more than once in one object", "\(text)")
        }
    }

    @Test func theReportQuotesTheReasonAlone() {
        var report = VectorFileReport(file: "sample.json")
        #expect(report.decode(Sample.self, from: Data("{}".utf8)) == nil)
        #expect(report.failures == ["sample.json cannot be read: missing member id at the top level"])
    }
}

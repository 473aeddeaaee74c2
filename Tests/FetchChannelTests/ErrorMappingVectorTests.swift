import DeviceSigning
import FetchChannel
import FetchChannelTestSupport
import FetchChannelVectors
import Foundation
import Testing

/// Runs every row of Vectors/error-mapping.json through the real sample recording and
/// `FetchErrorMapping.map`, with `ErrorMappingVectors` (also run by `fetchchannel vectors
/// verify`); one test case per row, every failure names the row id.
@Suite struct ErrorMappingVectorTests {
    static let data: Data = {
        let url = PackageLocations.vectors.appendingPathComponent(ErrorMappingVectors.fileName)
        // A missing file fails `fileHasEnoughUniqueRows` with the reading error.
        return (try? Data(contentsOf: url)) ?? Data()
    }()

    static let file: ErrorMappingVectors.File =
        (try? ErrorMappingVectors.decode(data)) ?? ErrorMappingVectors.File(server: "", rows: [])

    @Test func fileHasEnoughUniqueRows() throws {
        let file = try ErrorMappingVectors.decode(Self.data)
        #expect(file.rows.count >= ErrorMappingVectors.minimumRows)
        for problem in ErrorMappingVectors.tableProblems(file) {
            Issue.record(Comment(rawValue: problem))
        }
    }

    /// A member that no checker reads, such as a misspelled `measuredOffsetMilis`, would leave
    /// its row checking less than it says: the file is refused, naming the member's path.
    @Test func aMemberNoCheckerReadsIsRefused() throws {
        let text = String(decoding: Self.data, as: UTF8.self)
        for (member, misspelled) in [
            (#""measuredOffsetMillis":"#, #""measuredOffsetMilis":"#),
            (#""requestCreationMillis":"#, #""requestCreationMilis":"#),
        ] {
            let changed = try #require(text.range(of: member), "the file names \(member)")
            let mutated = Data(text.replacingCharacters(in: changed, with: misspelled).utf8)
            let report = ErrorMappingVectors.check(mutated)
            #expect(
                report.failures.contains { $0.contains(misspelled.dropFirst().dropLast(2)) },
                "\(report.failures)")
        }
        #expect(ErrorMappingVectors.check(Self.data).failures.isEmpty)
    }

    @Test(arguments: file.rows.map(\.id))
    func row(_ id: String) throws {
        let row = try #require(Self.file.rows.first { $0.id == id }, "row \(id)")
        for problem in ErrorMappingVectors.problems(of: row, in: Self.file) {
            Issue.record(Comment(rawValue: problem))
        }
    }
}

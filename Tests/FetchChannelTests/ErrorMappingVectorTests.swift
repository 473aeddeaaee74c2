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

    @Test(arguments: file.rows.map(\.id))
    func row(_ id: String) throws {
        let row = try #require(Self.file.rows.first { $0.id == id }, "row \(id)")
        for problem in ErrorMappingVectors.problems(of: row, in: Self.file) {
            Issue.record(Comment(rawValue: problem))
        }
    }
}

import FetchChannelBenchmarks
import Foundation
import Testing

/// `fetchchannel bench --json`: every row, with exactly the documented keys. A short run of a
/// debug build: the numbers mean nothing here, only the shape and the names.
@Suite struct BenchProcessTests {
    @Test func jsonRowsHaveTheContractShape() async throws {
        let sandbox = try CLISandbox()
        defer { sandbox.remove() }
        let result = try await sandbox.run(["bench", "--json", "--seconds", "0.05", "--signatures", "1000", "--emulator-requests", "1000"],
                                           passphrase: nil)
        #expect(result.status == 0, "\(result.summary)")
        let rows = try #require(try result.json() as? [[String: Any]], "\(result.summary)")
        #expect(rows.compactMap { $0["name"] as? String } == BenchmarkSuite.rowNames)
        for row in rows {
            #expect(Set(row.keys) == ["name", "value", "unit", "baseline", "ratio", "target", "met"], "\(row)")
            #expect(row["value"] is NSNumber && row["met"] is Bool && row["target"] is String)
            #expect(row["baseline"] is NSNumber || row["baseline"] is NSNull)
        }
        #expect(result.err.contains("Measuring"), "progress goes to stderr")
    }
}

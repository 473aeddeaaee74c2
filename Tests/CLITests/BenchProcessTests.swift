import FetchChannelBenchmarks
import Foundation
import Testing

extension CLISubprocessTests {
    /// `fetchchannel bench --json`: rows with exactly the documented keys. A short debug run of the
    /// light rows only (the emulator and fetch rows load both cores for seconds and would disturb the
    /// timing tests running beside this one; CI's release smoke run of fetchchannel-bench runs every
    /// row through the same BenchmarkSuite, which checks the names against `rowNames`).
    @Suite struct BenchProcessTests {
        static let lightRows = ["sign", "verify", "device-signature", "keystore-load", "sign-resident-growth"]

        @Test func jsonRowsHaveTheContractShape() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(["bench", "--json", "--seconds", "0.05", "--signatures", "1000",
                                                "--rows", Self.lightRows.joined(separator: ",")], passphrase: nil)
            #expect(result.status == 0, "\(result.summary)")
            let rows = try #require(try result.json() as? [[String: Any]], "\(result.summary)")
            #expect(rows.compactMap { $0["name"] as? String } == BenchmarkSuite.rowNames.filter(Self.lightRows.contains))
            for row in rows {
                #expect(Set(row.keys) == ["name", "value", "unit", "baseline", "ratio", "target", "met"], "\(row)")
                #expect(row["value"] is NSNumber && row["met"] is Bool && row["target"] is String)
                #expect(row["baseline"] is NSNumber || row["baseline"] is NSNull)
            }
            #expect(rows.contains { $0["baseline"] is NSNull && $0["ratio"] is NSNull }, "absent values are null, not missing")
            #expect(result.err.contains("Measuring"), "progress goes to stderr")
        }

        @Test func unknownRowIsAUsageError() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(["bench", "--rows", "sign,teleport"], passphrase: nil)
            #expect(result.status == 64 && result.err.contains("unknown row 'teleport'"), "\(result.summary)")
        }

        @Test func everyRowNameIsDocumented() {
            #expect(BenchmarkSuite.rowNames.count == Set(BenchmarkSuite.rowNames).count)
            for name in ["sign", "verify", "device-signature", "fetch-8-backends", "emulator-fetches"] {
                #expect(BenchmarkSuite.rowNames.contains(name), "the issue's stable name \(name)")
            }
        }
    }
}

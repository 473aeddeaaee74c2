/// Every benchmark row, in report order: the one list that `fetchchannel bench` and
/// `fetchchannel-bench` both run, so a row added here appears in both.
public enum BenchmarkSuite {
    /// The row names, in order (stable: checks outside the test suite read them).
    public static let rowNames = ["sign", "verify", "keystore-load", "sign-resident-growth"]

    /// - Parameters:
    ///   - seconds: measuring time of the rate rows.
    ///   - signatures: signatures made for the resident-memory row.
    public static func rows(seconds: Double, signatures: Int) throws -> [BenchmarkRow] {
        var rows = try SigningBenchmarks.rows(seconds: seconds)
        rows.append(try KeyStoreBenchmarks.loadRow())
        rows.append(try SigningBenchmarks.memoryRow(signatures: signatures))
        return rows
    }
}

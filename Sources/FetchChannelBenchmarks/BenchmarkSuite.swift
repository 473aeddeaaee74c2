/// Every benchmark row, in report order: the one list that `fetchchannel bench` and
/// `fetchchannel-bench` both run, so a row added here appears in both.
public enum BenchmarkSuite: Sendable {
    /// The row names, in order (stable: checks outside the test suite read them).
    public static let rowNames = [
        "sign", "verify", "device-signature",
        "emulator-fetches", "emulator-latency-p50", "emulator-latency-p99", "emulator-resident-growth",
        "fetch-8-backends", "fetch-client-cpu",
        "keystore-load", "sign-resident-growth",
    ]

    public struct Options: Sendable {
        /// Measuring time of the rate rows.
        public var seconds: Double
        /// Signatures made for the signing resident-memory row.
        public var signatures: Int
        /// Requests for the emulator's resident-memory row; nil derives a count from `seconds`.
        public var emulatorRequests: Int?

        public init(seconds: Double = 4, signatures: Int = 1_000_000, emulatorRequests: Int? = nil) {
            self.seconds = seconds
            self.signatures = signatures
            self.emulatorRequests = emulatorRequests
        }
    }

    public static func rows(_ options: Options) async throws -> [BenchmarkRow] {
        var rows = try SigningBenchmarks.rows(seconds: options.seconds)
        rows.append(try DeviceSignatureBenchmarks.row(seconds: options.seconds))
        rows.append(contentsOf: try EmulatorBenchmarks.rows(.init(seconds: options.seconds, residentRequests: options.emulatorRequests)))
        rows.append(contentsOf: try await FetchBenchmarks.rows())
        rows.append(try KeyStoreBenchmarks.loadRow())
        rows.append(try SigningBenchmarks.memoryRow(signatures: options.signatures))
        return rows
    }
}

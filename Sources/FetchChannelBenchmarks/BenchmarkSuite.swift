/// Every benchmark row, in report order: the one list that `fetchchannel bench` and
/// `fetchchannel-bench` both run, so a row added here appears in both.
package enum BenchmarkSuite: Sendable {
    /// The row names, in order (stable: checks outside the test suite read them).
    package static let rowNames = [
        "sign", "verify", "device-signature", "jwe-decrypt",
        "emulator-fetches", "emulator-latency-p50", "emulator-latency-p99", "emulator-resident-growth",
        "emulator-tls-handshakes",
        "fetch-8-backends", "fetch-client-cpu", "fetch-client-cpu-tls", "fetch-client-cpu-jwe",
        "keystore-load", "sign-resident-growth",
        "trigger-day-requests", "pipeline-tokens", "tpm-sign",
    ]

    package struct Options: Sendable {
        /// The values each setting may take: both commands refuse others before any row runs
        /// (an infinite time would trap in the slicing arithmetic).
        package static let secondsRange = 0.01...3_600.0
        package static let signaturesRange = 1...100_000_000
        package static let emulatorRequestsRange = 1_000...100_000_000

        /// Measuring time of the rate rows.
        package var seconds: Double
        /// Signatures made for the signing resident-memory row.
        package var signatures: Int
        /// Requests for the emulator's resident-memory row; nil: 1,000,000 (`EmulatorBenchmarks`).
        package var emulatorRequests: Int?
        /// Only these rows (names from `rowNames`); nil runs every row. Rows measured together
        /// (sign and verify; the emulator's four; the fetch client's four) run as a group.
        package var only: Set<String>?

        package init(
            seconds: Double = 4, signatures: Int = 1_000_000, emulatorRequests: Int? = nil, only: Set<String>? = nil
        ) {
            self.seconds = seconds
            self.signatures = signatures
            self.emulatorRequests = emulatorRequests
            self.only = only
        }
    }

    package static func rows(_ options: Options) async throws -> [BenchmarkRow] {
        func wanted(_ names: String...) -> Bool {
            options.only.map { !$0.isDisjoint(with: names) } ?? true
        }
        var rows: [BenchmarkRow] = []
        if wanted("sign", "verify") { rows += try SigningBenchmarks.rows(seconds: options.seconds) }
        if wanted("device-signature") { rows.append(try DeviceSignatureBenchmarks.row(seconds: options.seconds)) }
        if wanted("jwe-decrypt") { rows.append(try JWEDecryptBenchmark.row(seconds: options.seconds)) }
        if wanted("emulator-fetches", "emulator-latency-p50", "emulator-latency-p99", "emulator-resident-growth") {
            rows += try EmulatorBenchmarks.rows(
                .init(seconds: options.seconds, residentRequests: options.emulatorRequests))
        }
        if wanted("emulator-tls-handshakes") {
            rows.append(try await TLSHandshakeBenchmark.row(seconds: options.seconds))
        }
        if wanted("fetch-8-backends", "fetch-client-cpu", "fetch-client-cpu-tls", "fetch-client-cpu-jwe") {
            rows += try await FetchBenchmarks.rows(seconds: options.seconds)
        }
        if wanted("keystore-load") { rows.append(try KeyStoreBenchmarks.loadRow()) }
        if wanted("sign-resident-growth") {
            rows.append(try SigningBenchmarks.memoryRow(signatures: options.signatures))
        }
        if wanted("trigger-day-requests") { rows.append(try await TriggerDayBenchmark.row()) }
        if wanted("pipeline-tokens") { rows.append(await PipelineBenchmark.row(seconds: options.seconds)) }
        if wanted("tpm-sign") { rows.append(try TPMSigningBenchmark.row(seconds: options.seconds)) }
        if let only = options.only { rows = rows.filter { only.contains($0.name) } }
        // The names are a contract: a row renamed or added without updating `rowNames` fails here.
        let expected = rowNames.filter { options.only?.contains($0) ?? true }
        guard rows.map(\.name) == expected else {
            throw BenchmarkError(
                "the benchmark produced rows \(rows.map(\.name)), but BenchmarkSuite.rowNames lists \(expected)")
        }
        return rows
    }
}

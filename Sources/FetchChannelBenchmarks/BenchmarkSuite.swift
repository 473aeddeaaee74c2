import DeviceSigning
import Foundation

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

    /// A name given to `--rows` that is not a row (an empty one included).
    package struct UnknownRow: Error, Equatable {
        package let name: String
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

/// The settings as both commands read them from the command line (`fetchchannel bench` through
/// its option parsers, `fetchchannel-bench` directly): one reading, so that both take the same
/// values within the same bounds, and refuse the same others before any row runs.
extension BenchmarkSuite.Options {
    /// `--seconds`: a decimal in ``secondsRange`` (`0.05`, `1e1`), nil otherwise. Not the other
    /// spellings `Double(_:)` reads (`0x1p-3`, `inf`, `nan`), which no one means as seconds.
    package static func seconds(from text: String) -> Double? {
        DecimalLiteral.value(of: text).flatMap { secondsRange.contains($0) ? $0 : nil }
    }

    /// `--signatures`: an integer in ``signaturesRange``, nil otherwise.
    package static func signatures(from text: String) -> Int? {
        Int(text).flatMap { signaturesRange.contains($0) ? $0 : nil }
    }

    /// `--emulator-requests`: an integer in ``emulatorRequestsRange``, nil otherwise.
    package static func emulatorRequests(from text: String) -> Int? {
        Int(text).flatMap { emulatorRequestsRange.contains($0) ? $0 : nil }
    }

    /// `--rows`: names from ``BenchmarkSuite/rowNames`` separated by commas, spaces around a name
    /// ignored (`sign, verify`). An empty name (`,sign`, `sign,,verify`, nothing) is not a row.
    package static func rows(from text: String) throws(BenchmarkSuite.UnknownRow) -> Set<String> {
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        if let unknown = names.first(where: { !BenchmarkSuite.rowNames.contains($0) }) {
            throw BenchmarkSuite.UnknownRow(name: unknown)
        }
        return Set(names)
    }
}

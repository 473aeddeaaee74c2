import FetchChannelBenchmarks
import FetchChannelEmulator
import Foundation

/// `fetchchannel bench`: every benchmark row in one run (the same rows as `fetchchannel-bench`).
struct BenchCommand: CLICommand {
    static let seconds = Option(
        "seconds", "S", help: "Measuring time for the rate rows (default: 4).",
        .decimal(in: BenchmarkSuite.Options.secondsRange))
    static let signatures = Option(
        "signatures", "N", help: "Signatures for the signing resident-memory row (default: 1000000).",
        .integer(in: Self.wide(BenchmarkSuite.Options.signaturesRange)))
    static let emulatorRequests = Option(
        "emulator-requests", "N",
        help: "Requests for the emulator's resident-memory row, at least 1000 (default: 1000000).",
        .integer(in: Self.wide(BenchmarkSuite.Options.emulatorRequestsRange)))
    private static func wide(_ range: ClosedRange<Int>) -> ClosedRange<Int64> {
        Int64(range.lowerBound)...Int64(range.upperBound)
    }
    static let rows = Option(
        "rows", "NAME,…", help: "Only these rows (default: all). Rows measured together run together.",
        ValueParser { list, option throws(UsageError) in
            let names = list.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            for name in names where !BenchmarkSuite.rowNames.contains(name) {
                throw UsageError(
                    .invalidValue,
                    "unknown row '\(ArgumentParser.shown(name))' for '--\(option)': expected names from "
                        + BenchmarkSuite.rowNames.joined(separator: ", "))
            }
            return Set(names)
        })

    static let spec = CommandSpec(
        path: ["bench"],
        abstract: "Run every benchmark row (rate, baseline measured in the same run, ratio, target).",
        discussion:
            "Meaningful in release builds only: swift run -c release fetchchannel bench. Rows: \(BenchmarkSuite.rowNames.joined(separator: ", ")). A target that is not met is reported in the row (met: false), not as a failure of the command. --json prints one array of {\"name\", \"value\", \"unit\", \"baseline\", \"ratio\", \"target\", \"met\"}.",
        options: [seconds, signatures, emulatorRequests, rows, CommonOptions.json]
    )

    let console: Console
    let settings: BenchmarkSuite.Options

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        console = Console(arguments, context: context)
        settings = .init(
            seconds: try arguments[Self.seconds] ?? 4, signatures: Int(try arguments[Self.signatures] ?? 1_000_000),
            emulatorRequests: try arguments[Self.emulatorRequests].map { Int($0) }, only: try arguments[Self.rows])
    }

    func run() async throws -> Int32 {
        let count = settings.only?.count ?? BenchmarkSuite.rowNames.count
        #if DEBUG
            console.note("warning: debug build; run 'swift run -c release fetchchannel bench' for meaningful numbers")
        #endif
        // The memory row's work is named only when that row is measured.
        let memoryRow =
            settings.only.map { $0.contains("sign-resident-growth") } ?? true
            ? ", then \(settings.signatures) signatures for the memory row" : ""
        console.note(
            "Measuring \(count) row\(count == 1 ? "" : "s") (\(DecimalText.format(settings.seconds)) s per rate row"
                + "\(memoryRow); this takes a while)…")
        // Ctrl-C, `kill` or a closed terminal stops the software TPM of the tpm-sign row and removes
        // the temporary directories before the process dies of the signal.
        let cleanup = await TerminationCleanup.catchingSignals()
        defer { cleanup.close() }
        let rows: [BenchmarkRow]
        do {
            rows = try await BenchmarkSuite.rows(settings)
        } catch {
            throw CLIFailure(.unexpectedOutcome, "the benchmark failed: \(error)")
        }
        console.line(console.json ? try BenchmarkReport.json(rows) : BenchmarkReport.table(rows))
        return ExitCode.success
    }
}

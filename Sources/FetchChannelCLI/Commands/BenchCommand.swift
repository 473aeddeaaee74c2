import FetchChannelBenchmarks
import FetchChannelEmulator
import Foundation

/// `fetchchannel bench`: every benchmark row in one run (the same rows as `fetchchannel-bench`).
struct BenchCommand: CLICommand {
    // Every value is read by BenchmarkSuite.Options, as `fetchchannel-bench` reads it.
    static let seconds = Option(
        "seconds", "S", help: "Measuring time for the rate rows (default: 4).",
        setting(
            BenchmarkSuite.Options.seconds(from:),
            expected: "a number from \(DecimalText.format(BenchmarkSuite.Options.secondsRange.lowerBound)) to "
                + DecimalText.format(BenchmarkSuite.Options.secondsRange.upperBound)))
    static let signatures = Option(
        "signatures", "N", help: "Signatures for the signing resident-memory row (default: 1000000).",
        setting(
            BenchmarkSuite.Options.signatures(from:),
            expected: "an integer in \(BenchmarkSuite.Options.signaturesRange)"))
    static let emulatorRequests = Option(
        "emulator-requests", "N",
        help: "Requests for the emulator's resident-memory row, at least 1000 (default: 1000000).",
        setting(
            BenchmarkSuite.Options.emulatorRequests(from:),
            expected: "an integer in \(BenchmarkSuite.Options.emulatorRequestsRange)"))
    static let rows = Option(
        "rows", "NAME,…", help: "Only these rows (default: all). Rows measured together run together.",
        ValueParser { list, option throws(UsageError) in
            do throws(BenchmarkSuite.UnknownRow) {
                return try BenchmarkSuite.Options.rows(from: list)
            } catch {
                throw UsageError(
                    .invalidValue,
                    "unknown row '\(ArgumentParser.shown(error.name))' for '--\(option)': expected names from "
                        + BenchmarkSuite.rowNames.joined(separator: ", "))
            }
        })

    /// A value `read` takes, or a usage error that says what was `expected`.
    private static func setting<Value: Sendable>(
        _ read: @escaping @Sendable (String) -> Value?, expected: String
    ) -> ValueParser<Value> {
        ValueParser { text, option throws(UsageError) in
            guard let value = read(text) else {
                throw UsageError(
                    .invalidValue,
                    "invalid value '\(ArgumentParser.shown(text))' for '--\(option)': expected \(expected)")
            }
            return value
        }
    }

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
            seconds: try arguments[Self.seconds] ?? 4, signatures: try arguments[Self.signatures] ?? 1_000_000,
            emulatorRequests: try arguments[Self.emulatorRequests], only: try arguments[Self.rows])
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

import FetchChannelBenchmarks
import Foundation

/// `fetchchannel bench`: every benchmark row in one run (the same rows as `fetchchannel-bench`).
enum BenchCommand {
    static let all = [bench]

    static let bench = Command(
        spec: CommandSpec(
            path: ["bench"],
            abstract: "Run every benchmark row (rate, baseline measured in the same run, ratio, target).",
            discussion:
                "Meaningful in release builds only: swift run -c release fetchchannel bench. Rows: \(BenchmarkSuite.rowNames.joined(separator: ", ")). A target that is not met is reported in the row (met: false), not as a failure of the command. --json prints one array of {\"name\", \"value\", \"unit\", \"baseline\", \"ratio\", \"target\", \"met\"}.",
            options: [
                .value("seconds", "S", help: "Measuring time for the rate rows (default: 4)."),
                .value("signatures", "N", help: "Signatures for the signing resident-memory row (default: 1000000)."),
                .value(
                    "emulator-requests", "N",
                    help:
                        "Requests for the emulator's resident-memory row, at least 1000 (default: derived from --seconds)."
                ),
                .value("rows", "NAME,…", help: "Only these rows (default: all). Rows measured together run together."),
                CommonOptions.json.spec,
            ]
        )
    ) { invocation in
        let seconds = try invocation.arguments.decimal("seconds", in: 0.01...3600) ?? 4
        let signatures = try invocation.arguments.integer("signatures", in: 1...100_000_000) ?? 1_000_000
        let emulatorRequests = try invocation.arguments.integer("emulator-requests", in: 1_000...100_000_000)
        var only: Set<String>?
        if let list = invocation.arguments.value("rows") {
            let names = list.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            for name in names where !BenchmarkSuite.rowNames.contains(name) {
                throw UsageError(
                    "unknown row '\(ArgumentParser.shown(name))' for '--rows': expected names from \(BenchmarkSuite.rowNames.joined(separator: ", "))"
                )
            }
            only = Set(names)
        }
        let count = only?.count ?? BenchmarkSuite.rowNames.count
        #if DEBUG
            invocation.note(
                "warning: debug build; run 'swift run -c release fetchchannel bench' for meaningful numbers")
        #endif
        invocation.note(
            "Measuring \(count) row\(count == 1 ? "" : "s") (\(format(seconds)) s per rate row, then \(signatures) signatures for the memory row; this takes a while)…"
        )
        let rows: [BenchmarkRow]
        do {
            rows = try await BenchmarkSuite.rows(
                .init(
                    seconds: seconds, signatures: Int(signatures), emulatorRequests: emulatorRequests.map { Int($0) },
                    only: only))
        } catch {
            throw CLIFailure("the benchmark failed: \(error)")
        }
        invocation.standardOutput.line(invocation.json ? try BenchmarkReport.json(rows) : BenchmarkReport.table(rows))
        return ExitCode.success
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

import FetchChannelVectors
import Foundation

/// `fetchchannel vectors verify`: every file of Vectors/ and the Wycheproof suites, checked by
/// the same code the test suite runs (FetchChannelVectors).
enum VectorCommands {
    static let all = [verify]

    static let verify = Command(
        spec: CommandSpec(
            path: ["vectors", "verify"],
            abstract: "Check every test vector file and the Wycheproof suites; end with 'N passed, M failed'.",
            discussion:
                "Runs each file in the vector directory through its checker (a file without one fails with \"no checker\"; README.md is documentation), then the Wycheproof ECDSA P-256 suites from --wycheproof DIR, else $WYCHEPROOF_DIR (when neither is given they are not run, and a note says so). One line per file on standard output, the last line 'N passed, M failed' (files); each failing case on standard error. Exit 0 only if M is 0. --json prints {\"files\": [{\"file\", \"passed\", \"cases\", \"failures\"}], \"passed\", \"failed\"}.",
            options: [
                .value("dir", "DIR", help: "The vector directory (default: Vectors)."),
                .value("wycheproof", "DIR", help: "The Wycheproof directory (default: $WYCHEPROOF_DIR)."),
                CommonOptions.json.spec,
            ]
        )
    ) { invocation in
        let context = invocation.context
        let directory = context.fileURL(try invocation.arguments.nonEmpty("dir") ?? "Vectors", isDirectory: true)
        var reports: [VectorFileReport]
        do {
            reports = try VectorSuite.verify(directory: directory)
        } catch {
            throw CLIFailure(
                "cannot list the vector directory \(directory.path): \((error as NSError).localizedDescription); run from the package root or give --dir DIR"
            )
        }
        if let given = try invocation.arguments.nonEmpty("wycheproof") {
            reports += WycheproofVectors.verify(directory: context.fileURL(given, isDirectory: true))
        } else if let found = WycheproofVectors.directory(environment: context.environment) {
            reports += WycheproofVectors.verify(directory: found)
        } else {
            invocation.note(
                "note: the Wycheproof suites were not run: give --wycheproof DIR or set $WYCHEPROOF_DIR to a directory that holds them."
            )
        }

        let passed = reports.filter(\.passed).count
        let failed = reports.count - passed
        for report in reports where !report.passed {
            for failure in report.failures {
                invocation.standardError.line("\(report.file): \(failure)")
            }
        }
        if invocation.json {
            let files: [[String: Any]] = reports.map { report in
                [
                    "file": report.file, "passed": report.passed, "cases": report.casesChecked,
                    "failures": report.failures,
                ]
            }
            invocation.standardOutput.line(try JSONOutput.text(["files": files, "passed": passed, "failed": failed]))
        } else {
            let width = (reports.map(\.file.count).max() ?? 0) + 2
            for report in reports {
                let name = report.file + String(repeating: " ", count: width - report.file.count)
                let cases = "\(report.casesChecked) case\(report.casesChecked == 1 ? "" : "s")"
                if report.passed {
                    invocation.standardOutput.line("ok      \(name)\(cases)")
                } else if report.casesChecked == 0, let reason = report.failures.first {
                    invocation.standardOutput.line("FAILED  \(name)\(reason)")
                } else {
                    invocation.standardOutput.line(
                        "FAILED  \(name)\(cases), \(report.failures.count) failed check\(report.failures.count == 1 ? "" : "s")"
                    )
                }
            }
            invocation.standardOutput.line("\(passed) passed, \(failed) failed")
        }
        return failed == 0 ? ExitCode.success : ExitCode.failure
    }
}

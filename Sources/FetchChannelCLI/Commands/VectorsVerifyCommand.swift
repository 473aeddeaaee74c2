import FetchChannelVectors
import Foundation

/// `fetchchannel vectors verify`: every file of Vectors/ and the Wycheproof suites, checked by
/// the same code the test suite runs (FetchChannelVectors).
struct VectorsVerifyCommand: CLICommand {
    static let directory = Option(
        "dir", "DIR", help: "The vector directory (default: Vectors).", .nonEmpty)
    static let wycheproof = Option(
        "wycheproof", "DIR", help: "The Wycheproof directory (default: $WYCHEPROOF_DIR).", .nonEmpty)

    static let spec = CommandSpec(
        path: ["vectors", "verify"],
        abstract: "Check every test vector file and the Wycheproof suites; end with 'N passed, M failed'.",
        discussion:
            "Runs each file in the vector directory through its checker (a file without one fails with \"no checker\"; README.md is documentation), then the Wycheproof ECDSA P-256 suites from --wycheproof DIR, else $WYCHEPROOF_DIR (when neither is given they are not run, and a note says so). One line per file on standard output, the last line 'N passed, M failed' (files); each failing case on standard error. Exit 0 only if M is 0. --json prints {\"files\": [{\"file\", \"passed\", \"cases\", \"failures\"}], \"passed\", \"failed\"}.",
        options: [directory, wycheproof, CommonOptions.json]
    )

    let console: Console
    let directory: URL
    /// `--wycheproof DIR`, else `$WYCHEPROOF_DIR`; nil when neither is given.
    let wycheproof: URL?

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        console = Console(arguments, context: context)
        directory = try context.fileURL(try arguments[Self.directory] ?? "Vectors", isDirectory: true)
        if let path = try arguments[Self.wycheproof] {
            wycheproof = try context.fileURL(path, isDirectory: true)
        } else {
            wycheproof = WycheproofVectors.directory(environment: context.environment)
        }
    }

    func run() async throws -> Int32 {
        var reports: [VectorFileReport]
        do {
            reports = try VectorSuite.verify(directory: directory)
        } catch {
            throw CLIFailure(
                .unreadableInput,
                "cannot list the vector directory \(directory.path): \(Self.whyUnlistable(directory)); "
                    + "run from the package root or give --dir DIR")
        }
        if let wycheproof {
            reports += WycheproofVectors.verify(directory: wycheproof)
        } else {
            console.note(
                "note: the Wycheproof suites were not run: give --wycheproof DIR or set $WYCHEPROOF_DIR to a "
                    + "directory that holds them.")
        }
        let failed = reports.filter { !$0.passed }.count
        for report in reports where !report.passed {
            for failure in report.failures {
                console.note("\(PrintableText.oneLine(report.file)): \(PrintableText.oneLine(failure))")
            }
        }
        if console.json {
            try console.printJSON([
                "files": reports.map(Self.jsonObject), "passed": reports.count - failed, "failed": failed,
            ])
        } else {
            printTable(reports, failed: failed)
        }
        guard failed == 0 else {
            // A runtime failure ends with its Error: line, as the tool's other commands do.
            throw CLIFailure(.unexpectedOutcome, "\(failed) of \(reports.count) vector files failed")
        }
        return ExitCode.success
    }

    /// Why `directory` could not be listed, in plain words: Foundation's text for a path that is
    /// not a directory is "The operation could not be completed. (NSCocoaErrorDomain error 256.)".
    private static func whyUnlistable(_ directory: URL) -> String {
        var status = stat()
        // stat's own answer: a path under a directory that cannot be searched exists, unseen.
        guard stat(directory.path, &status) != 0 else { return "it is not a readable directory" }
        let code = errno
        return code == ENOENT
            ? "it does not exist" : "it is not a readable directory (\(String(cString: strerror(code))))"
    }

    private static func jsonObject(_ report: VectorFileReport) -> [String: Any] {
        ["file": report.file, "passed": report.passed, "cases": report.casesChecked, "failures": report.failures]
    }

    /// One line per file, then `N passed, M failed`.
    private func printTable(_ reports: [VectorFileReport], failed: Int) {
        let width = (reports.map(\.file.count).max() ?? 0) + 2
        for report in reports {
            // A file name is the directory's to choose: shown on one line, without control characters.
            let file = PrintableText.oneLine(report.file)
            let name = file + String(repeating: " ", count: max(0, width - file.count))
            let cases = "\(report.casesChecked) case\(report.casesChecked == 1 ? "" : "s")"
            if report.passed {
                console.line("ok      \(name)\(cases)")
            } else if report.casesChecked == 0, let reason = report.failures.first {
                console.line("FAILED  \(name)\(PrintableText.oneLine(reason))")
            } else {
                let checks = "\(report.failures.count) failed check\(report.failures.count == 1 ? "" : "s")"
                console.line("FAILED  \(name)\(cases), \(checks)")
            }
        }
        console.line("\(reports.count - failed) passed, \(failed) failed")
    }
}

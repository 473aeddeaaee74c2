import FetchChannelBenchmarks
import FetchChannelEmulator
import Foundation

// Release-mode benchmark: `swift run -c release fetchchannel-bench [--seconds S] [--signatures N] [--emulator-requests N] [--rows NAME,…] [--json]`.
// The same rows as `fetchchannel bench` (both run BenchmarkSuite); kept as its own small product
// because CI builds and runs it on its own.
// Every rate is compared with a baseline measured in this same process.

var seconds = 4.0
var signatures = 1_000_000
var emulatorRequests: Int?
var only: Set<String>?
var json = false
let usage =
    "USAGE: fetchchannel-bench [--seconds S] [--signatures N] [--emulator-requests N] [--rows NAME,…] [--json]"
var arguments = CommandLine.arguments.dropFirst()
/// Ends the process with a usage error (64), as `fetchchannel bench` does.
func refuse(_ message: String) -> Never {
    FileHandle.standardError.write(Data("Error: \(message)\n".utf8))
    exit(64)
}
// Each value is read by BenchmarkSuite.Options, as `fetchchannel bench` reads it; as there,
// `--name=value` is `--name value`, a flag takes no value, and an option is given once.
var given: Set<String> = []
while let next = arguments.popFirst() {
    var argument = next
    var attached: String?
    if next.hasPrefix("--"), let equals = next.firstIndex(of: "=") {
        argument = String(next[..<equals])
        attached = String(next[next.index(after: equals)...])
    }
    if argument.hasPrefix("-"), !given.insert(argument).inserted { refuse("'\(argument)' is given twice") }
    if let attached {
        guard argument != "--json", argument != "--help" else { refuse("'\(argument)' takes no value") }
        arguments.insert(attached, at: arguments.startIndex)
    }
    switch argument {
    case "--seconds":
        guard let value = arguments.popFirst().flatMap(BenchmarkSuite.Options.seconds(from:)) else {
            refuse("--seconds needs a number of seconds in 0.01...3600")
        }
        seconds = value
    case "--signatures":
        guard let value = arguments.popFirst().flatMap(BenchmarkSuite.Options.signatures(from:)) else {
            refuse("--signatures needs an integer in 1...100000000")
        }
        signatures = value
    case "--emulator-requests":
        guard let value = arguments.popFirst().flatMap(BenchmarkSuite.Options.emulatorRequests(from:)) else {
            refuse("--emulator-requests needs an integer in 1000...100000000")
        }
        emulatorRequests = value
    case "--rows":
        do throws(BenchmarkSuite.UnknownRow) {
            only = try BenchmarkSuite.Options.rows(from: arguments.popFirst() ?? "")
        } catch {
            refuse(
                "unknown row '\(error.name)' for --rows: expected names from "
                    + BenchmarkSuite.rowNames.joined(separator: ", "))
        }
    case "--json":
        json = true
    case "-h", "--help":
        print(usage)
        exit(0)
    default:
        refuse("unknown argument '\(argument)'\n\(usage)")
    }
}

#if DEBUG
    FileHandle.standardError.write(
        Data("warning: debug build; run with `swift run -c release fetchchannel-bench` for meaningful numbers\n".utf8))
#endif

// Ctrl-C, `kill` or a closed terminal stops the software TPM of the tpm-sign row and removes the
// temporary directories before the process dies of the signal, as in `fetchchannel bench`. The
// scope is closed before any exit: during a signal's cleanup, that waits for the process's end.
let cleanup = await TerminationCleanup.catchingSignals()
let measured: Result<[BenchmarkRow], any Error>
do {
    measured = .success(
        try await BenchmarkSuite.rows(
            .init(seconds: seconds, signatures: signatures, emulatorRequests: emulatorRequests, only: only)))
} catch {
    measured = .failure(error)
}
cleanup.close()

do {
    let rows = try measured.get()
    print(json ? try BenchmarkReport.json(rows) : BenchmarkReport.table(rows))
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(1)
}

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
while let argument = arguments.popFirst() {
    switch argument {
    case "--seconds":
        guard let value = arguments.popFirst().flatMap(Double.init), BenchmarkSuite.Options.secondsRange.contains(value)
        else {
            FileHandle.standardError.write(Data("Error: --seconds needs a number of seconds in 0.01...3600\n".utf8))
            exit(64)
        }
        seconds = value
    case "--signatures":
        guard let value = arguments.popFirst().flatMap(Int.init), BenchmarkSuite.Options.signaturesRange.contains(value)
        else {
            FileHandle.standardError.write(Data("Error: --signatures needs an integer in 1...100000000\n".utf8))
            exit(64)
        }
        signatures = value
    case "--emulator-requests":
        guard let value = arguments.popFirst().flatMap(Int.init),
            BenchmarkSuite.Options.emulatorRequestsRange.contains(value)
        else {
            FileHandle.standardError.write(
                Data("Error: --emulator-requests needs an integer in 1000...100000000\n".utf8))
            exit(64)
        }
        emulatorRequests = value
    case "--rows":
        // The names `fetchchannel bench --rows` takes: BenchmarkSuite.rowNames, comma-separated.
        let names = (arguments.popFirst() ?? "").split(separator: ",").map(String.init)
        guard !names.isEmpty, names.allSatisfy(BenchmarkSuite.rowNames.contains) else {
            FileHandle.standardError.write(
                Data("Error: --rows needs row names from: \(BenchmarkSuite.rowNames.joined(separator: ", "))\n".utf8))
            exit(64)
        }
        only = Set(names)
    case "--json":
        json = true
    case "-h", "--help":
        print(usage)
        exit(0)
    default:
        FileHandle.standardError.write(Data("Error: unknown argument '\(argument)'\n\(usage)\n".utf8))
        exit(64)
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

import FetchChannelTestSupport
import Foundation

/// `fetchchannel serve` as a child process that the test stops: started with its temporary
/// directory (and so a generated CA file) inside the sandbox, and handed back once it has printed
/// the line it prints when it listens.
extension CLIProcess {
    /// Starts `serve arguments…` and returns the child and the first line of its standard output
    /// (empty if the child exited or printed nothing within 20 s, stretched as ``waitFor(_:)`` says).
    static func startServe(_ arguments: [String], sandbox: CLISandbox) async throws -> (CLIProcess, String) {
        let environment = sandbox.environment(passphrase: nil, extra: ["TMPDIR": sandbox.root.path])
        let child = try CLIProcess(["serve"] + arguments, environment: environment)
        try child.start()
        try await child.waitFor { $0.outputSoFar.contains("\n") }
        return (child, child.outputSoFar.split(separator: "\n").first.map(String.init) ?? "")
    }

    /// Polls until `condition` holds for what the child wrote, the child exits or 20 s pass
    /// (stretched in the sanitizer runs, ``LooseTimeBounds``): the child writes when it is ready,
    /// nothing here waits for time to pass.
    func waitFor(_ condition: (CLIProcess) -> Bool) async throws {
        let deadline = Date().addingTimeInterval(20 * Double(LooseTimeBounds.scale))
        while !condition(self) && process.isRunning && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// What the child wrote to standard error so far.
    var errorSoFar: String {
        (try? String(contentsOf: errorURL, encoding: .utf8)) ?? ""
    }

    /// A child still running when its test ends early (a thrown error) is stopped all the same.
    func terminateIfRunning() {
        if process.isRunning { process.terminate() }
    }

    /// Stops the child with SIGTERM and returns how it ended.
    func stop() async -> CLIResult {
        process.terminate()
        return await waitForExit()
    }
}

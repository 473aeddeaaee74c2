import DeviceSigning
import Foundation

/// What an external tool (openssl, curl) printed and how it exited.
public struct ToolResult: Sendable {
    public let status: Int32
    public let output: String
    public let errors: String

    /// One line for an expectation's message.
    public var summary: String { "exit \(status), stdout: \(output), stderr: \(errors)" }
}

/// Runs the system's command-line tools, which the interoperability tests use as the other side.
public enum ExternalTool {
    /// The executable `name` in a directory of PATH, or nil: the tests that need it are skipped.
    public static func onPath(_ name: String) -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return directories.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// `openssl` on PATH, looked up once for every suite that uses it.
    public static let openssl = onPath("openssl")
    /// `curl` on PATH, looked up once for every suite that uses it.
    public static let curl = onPath("curl")

    /// Runs `executable` with standard input closed and waits for it. Blocking: call it from a
    /// suite with `.dedicatedThread` or through ``DedicatedThreads``.
    ///
    /// curl is run with `-q` first (it counts only as the very first argument): it then reads no
    /// `.curlrc` of the user's, whose options (`insecure`, `proxy`, …) would change what a test
    /// sees. Every test's curl runs here.
    public static func run(_ executable: String, _ arguments: [String]) throws -> ToolResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        let isCurl = process.executableURL?.lastPathComponent == "curl"
        process.arguments = isCurl && arguments.first != "-q" ? ["-q"] + arguments : arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Standard error is read beside standard output, so that neither pipe can fill and stall
        // the tool while the other is read.
        let errorData = Locked(Data())
        let errorsRead = DispatchSemaphore(value: 0)
        Thread {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            errorData.withLock { $0 = data }
            errorsRead.signal()
        }.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        errorsRead.wait()
        process.waitUntilExit()
        let errorText = errorData.withLock { data in String(decoding: data, as: UTF8.self) }
        return ToolResult(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self), errors: errorText)
    }
}

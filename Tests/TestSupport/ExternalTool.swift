import DeviceSigning
import FetchChannelEmulator
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

    /// curl's trust options for a CA that signed nothing: `--cacert` with the certificate of a
    /// fresh CA, written in `directory`, and `--capath` with an empty directory there. curl reads
    /// the machine's CA directory besides a `--cacert` file unless told another: with these, a
    /// refusal ("untrusted", exit 60) does not depend on what the machine trusts.
    public static func curlTrustingAnotherCA(in directory: URL) throws -> [String] {
        let caFile = directory.appendingPathComponent("other-ca-\(UUID().uuidString).pem")
        let emptyDirectory = directory.appendingPathComponent("no-cas-\(UUID().uuidString)", isDirectory: true)
        guard let authority = try TLSServerIdentity.generate().certificateAuthorityPEM else {
            throw CocoaError(
                .fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "the generated CA has no certificate"])
        }
        try Data(authority.utf8).write(to: caFile)
        try FileManager.default.createDirectory(at: emptyDirectory, withIntermediateDirectories: false)
        return ["--cacert", caFile.path, "--capath", emptyDirectory.path]
    }

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

import Foundation

@testable import FetchChannelEmulator

/// Helpers for the TLS tests: a scratch directory and the system's curl and openssl as clients.
enum TLSTestSupport {
    struct ToolResult {
        let status: Int32
        let output: String
        let errors: String
        var summary: String { "exit \(status), stdout: \(output), stderr: \(errors)" }
    }

    static let curl = "/usr/bin/curl"
    static let openssl = "/usr/bin/openssl"
    static var toolsAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: curl) && FileManager.default.isExecutableFile(atPath: openssl)
    }

    /// Runs a tool with standard input closed; blocking, so call it on a dedicated thread.
    static func run(_ executable: String, _ arguments: [String]) throws -> ToolResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ToolResult(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: errorData, as: UTF8.self))
    }

    /// `curl` GET of `url`; standard output is the status code alone.
    static func curlStatus(_ url: String, _ trust: [String]) throws -> ToolResult {
        try run(curl, ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10"] + trust + [url])
    }

    /// A fresh private directory for certificate files; remove it with `remove`.
    static func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tls-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700])
        return url
    }

    static func remove(_ directory: URL) {
        try? FileManager.default.removeItem(at: directory)
    }
}

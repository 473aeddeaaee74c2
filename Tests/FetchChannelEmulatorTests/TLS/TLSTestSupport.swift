import FetchChannelTestSupport
import Foundation

@testable import FetchChannelEmulator

/// Helpers for the TLS tests: a scratch directory and the system's curl and openssl as clients.
enum TLSTestSupport {
    /// The programs found on PATH ("curl" and "openssl" as they are when missing: running one
    /// then fails, and the tests that need them are skipped by `toolsAvailable`).
    static let curl = ExternalTool.curl ?? "curl"
    static let openssl = ExternalTool.openssl ?? "openssl"
    static var toolsAvailable: Bool { ExternalTool.curl != nil && ExternalTool.openssl != nil }

    /// `curl` GET of `url`; standard output is the status code alone.
    static func curlStatus(_ url: String, _ trust: [String]) throws -> ToolResult {
        try ExternalTool.run(
            curl, ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10"] + trust + [url])
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

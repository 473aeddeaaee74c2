import FetchChannelTestSupport
import Foundation
import Testing

/// The system tools some process tests use as the other side (openssl, curl), found on PATH. A
/// test that needs one is skipped, with the reason, where it is missing.
enum SystemTools {
    static let hasOpenSSL = ExternalTool.openssl != nil
    static let hasCurl = ExternalTool.curl != nil
    static let hasOpenSSLAndCurl = hasOpenSSL && hasCurl

    /// Runs `name` from PATH on a thread of its own (a blocking subprocess), standard input closed.
    static func run(_ name: String, _ arguments: [String]) async throws -> ToolResult {
        let executable = try #require(ExternalTool.onPath(name), "\(name) is not on PATH")
        return try await DedicatedThreads.run { try ExternalTool.run(executable, arguments) }
    }

    /// curl with a 10 s limit, errors shown (`-sS`).
    static func curl(_ arguments: [String]) async throws -> ToolResult {
        try await run("curl", ["-sS", "--max-time", "10"] + arguments)
    }
}

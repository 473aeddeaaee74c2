import FetchChannelTestSupport
import Foundation
import Testing

/// The interoperability tests use the `openssl` and `curl` programs as the other side: real TLS
/// handshakes against `openssl s_server`, `curl --cacert` and `openssl s_client` against the
/// reference backend, `openssl pkeyutl -derive` beside the ECDH step. Where a program is missing
/// those suites skip themselves, loudly. Under CI=true that would hide them, so there their absence
/// is a failure, as the TPM tools' and the Wycheproof suites' are (.ci/run installs them).
@Suite struct InteroperabilityToolsTests {
    static let tools = ["openssl", "curl"]

    @Test func theProgramsTheInteroperabilityTestsUseArePresentInCI() {
        let missing = Self.tools.filter { ExternalTool.onPath($0) == nil }
        guard !missing.isEmpty else { return }
        let message =
            "\(missing.joined(separator: " and ")) not on PATH: the interoperability tests that need them are skipped"
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            Issue.record("\(message), and CI=true")
        } else {
            print("⚠️  SKIPPED: \(message).")
        }
    }
}

import FetchChannelEmulator
import Foundation
import Testing

extension SoftwareTPM {
    /// Whether swtpm and OpenSSL's tpm2 provider are installed. When not, says loudly that `what`
    /// was skipped; under `CI=true` their absence is a test failure.
    public static func available(for what: String) -> Bool {
        guard let missing = missingPrerequisites else { return true }
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            Issue.record("\(what): \(missing), and CI=true: install swtpm swtpm-tools tpm2-openssl.")
        } else {
            print("⚠️  SKIPPED: \(what): \(missing). These TPM checks did NOT run.")
        }
        return false
    }
}

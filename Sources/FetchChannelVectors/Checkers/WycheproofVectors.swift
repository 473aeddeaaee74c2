import DeviceSigning
import Foundation

/// The Wycheproof ECDSA P-256 / SHA-256 suites (not copied into Vectors/): every `valid` case
/// verifies, every `invalid` one is rejected; each disagreement names its `tcId`. (`acceptable`
/// cases, none in these suites, must be rejected too: this package is strict.) Any other `result`
/// (a misspelled `vaild`) fails its case instead of counting as `invalid`.
public enum WycheproofVectors: Sendable {
    /// How a suite encodes its signatures.
    public enum Encoding: Sendable { case der, p1363 }

    /// A suite this package runs: its file, encoding and the number of cases it must hold.
    public struct Suite: Sendable {
        public let fileName: String
        public let encoding: Encoding
        public let expectedCases: Int
    }

    public static let suites = [
        Suite(fileName: "ecdsa_secp256r1_sha256_test.json", encoding: .der, expectedCases: 484),
        Suite(fileName: "ecdsa_secp256r1_sha256_p1363_test.json", encoding: .p1363, expectedCases: 262),
    ]

    /// Whether a case of each `result` must verify: `acceptable` (legal but weak) is rejected, as
    /// this package is strict.
    static let verifies = ["valid": true, "invalid": false, "acceptable": false]

    struct File: Decodable {
        let numberOfTests: Int
        let testGroups: [Group]
    }

    struct Group: Decodable {
        let publicKeyDer: String
        let sha: String
        let tests: [Case]
    }

    struct Case: Decodable {
        let tcId: Int
        let comment: String
        let msg: String
        let sig: String
        let result: String
    }

    /// Checks one suite's file contents.
    public static func check(_ data: Data, suite: Suite) -> VectorFileReport {
        let name = "wycheproof/" + suite.fileName
        var report = VectorFileReport(file: name)
        guard let file = report.decode(File.self, from: data, describedAs: suite.fileName) else { return report }
        for group in file.testGroups {
            report.expect(group.sha == "SHA-256", "a test group uses \(group.sha), not SHA-256")
            guard let der = VectorDecoding.hex(group.publicKeyDer),
                let key = try? P256.Signing.PublicKey(derRepresentation: der)
            else {
                report.fail(
                    "a test group's publicKeyDer is not a P-256 public key; its \(group.tests.count) tests did not run")
                continue
            }
            for test in group.tests {
                report.casesChecked += 1
                let signatureBytes = VectorDecoding.hex(test.sig) ?? []
                let signature: P256.Signing.ECDSASignature?
                switch suite.encoding {
                case .der: signature = try? P256.Signing.ECDSASignature(derRepresentation: signatureBytes)
                case .p1363: signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
                }
                let message = VectorDecoding.hex(test.msg)
                let verified =
                    message.flatMap { message in signature.map { key.isValidSignature($0, for: message) } } ?? false
                guard let expected = verifies[test.result] else {
                    report.fail(
                        "tcId \(test.tcId) (\(test.comment)): result \"\(test.result)\" is not valid, invalid or acceptable"
                    )
                    continue
                }
                report.expect(
                    verified == expected,
                    "tcId \(test.tcId) (\(test.comment)): expected \(test.result), got \(verified ? "valid" : "invalid")"
                )
            }
        }
        let count = report.casesChecked
        report.expect(
            count == file.numberOfTests, "ran \(count) cases but the file says numberOfTests = \(file.numberOfTests)")
        report.expect(count == suite.expectedCases, "ran \(count) cases; this suite has \(suite.expectedCases)")
        return report
    }

    /// Checks every suite in `directory`; a suite file that is missing, or not a regular file
    /// (``VectorFileRead``), is a failed report.
    public static func verify(directory: URL) -> [VectorFileReport] {
        suites.map { suite in
            let url = directory.appendingPathComponent(suite.fileName)
            switch VectorFileRead.contents(of: url.path, maximumBytes: VectorSuite.maximumFileBytes) {
            case .success(let data): return check(data, suite: suite)
            case .failure(let failure):
                return .unusable("wycheproof/" + suite.fileName, "\(url.path) cannot be read (\(failure))")
            }
        }
    }

    /// The variable that names the Wycheproof directory when no `--wycheproof DIR` is given.
    public static let environmentVariable = "WYCHEPROOF_DIR"

    /// `$WYCHEPROOF_DIR` when it is set; nil otherwise. Set to a path without the suites (a typo),
    /// it fails them as `--wycheproof` with that path would, rather than skip them in silence.
    /// Nothing else is searched: a guessed location (beside the package, above a sandbox) would
    /// make a run depend on whatever happens to lie there.
    public static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        guard let path = environment[environmentVariable], !path.isEmpty else { return nil }
        return URL(fileURLWithPath: path, isDirectory: true)
    }
}

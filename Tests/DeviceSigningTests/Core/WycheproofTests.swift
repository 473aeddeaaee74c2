import DeviceSigning
import FetchChannelTestSupport
import FetchChannelVectors
import Foundation
import Testing

/// Wycheproof ECDSA P-256 / SHA-256 through `WycheproofVectors` (also run by `fetchchannel vectors
/// verify --wycheproof DIR`): every `valid` case verifies, every `invalid` one is rejected, the
/// case counts are pinned; each disagreement names its tcId.
@Suite struct WycheproofTests {
    /// Runs one suite; nil when its file is missing (a skip outside CI, a failure under CI=true).
    func run(_ suite: WycheproofVectors.Suite) throws -> VectorFileReport? {
        guard let data = try TestSupport.wycheproofFile(suite.fileName) else { return nil }
        let report = WycheproofVectors.check(data, suite: suite)
        report.recordFailures()
        return report
    }

    @Test func derSuiteAgrees() throws {
        let suite = try #require(WycheproofVectors.suites.first { $0.encoding == .der })
        guard let report = try run(suite) else { return }
        #expect(report.casesChecked == 484)
    }

    @Test func p1363SuiteAgrees() throws {
        let suite = try #require(WycheproofVectors.suites.first { $0.encoding == .p1363 })
        guard let report = try run(suite) else { return }
        #expect(report.casesChecked == 262)
    }
}

import DeviceSigning
import FetchChannelTestSupport
import FetchChannelVectors
import Foundation
import Testing

/// Runs every row of Vectors/clock-skew.json through the real sample → estimator → classification →
/// policy pipeline, with `ClockSkewVectors` (also run by `fetchchannel vectors verify`); every
/// failure names the row id.
@Suite struct ClockSkewVectorTests {
    static func data() throws -> Data {
        try TestSupport.vectorFile(ClockSkewVectors.fileName)
    }

    @Test func tableIsWellFormedAndEveryRowMatchesTheCode() throws {
        let data = try Self.data()
        let report = ClockSkewVectors.check(data)
        report.recordFailures()
        let file = try ClockSkewVectors.decode(data)
        #expect(file.rows.count >= ClockSkewVectors.minimumRows)
        #expect(report.casesChecked == file.rows.count)
    }

    @Test func tableCoversEveryOutcome() throws {
        let file = try ClockSkewVectors.decode(Self.data())
        #expect(Set(file.rows.map(\.expected.classification)) == ["definite", "probable", "none"])
        #expect(Set(file.rows.map(\.expected.decision)) == ["surface", "retry", "none"])
    }
}

import Foundation
import Testing

@testable import DeviceSigning

/// Runs every row of Vectors/clock-skew.json through the real sample → estimator → classification →
/// policy pipeline; every failure names the row id.
@Suite struct ClockSkewVectorTests {
    struct VectorFile: Decodable {
        var server: String
        var samplesPerServer: Int
        var retryThresholdMillis: Int64
        var rows: [Row]
    }

    struct Row: Decodable {
        var id: String
        var comment: String
        var input: Input
        var expected: Expected
    }

    struct Input: Decodable {
        var sentAtMillis: Int64
        var receivedAtMillis: Int64
        var dateHeader: String?
        var ageHeader: String?
        var status: Int
        var body: String
        var toleranceMillis: Int64
        var policy: Policy
        var priorOffsetMillis: Int64
        var isRetry: Bool
        var requestCreationMillis: Int64?
        var previousSamples: [Int64]?
    }

    /// `"report"` or `{"compensate": maximumOffsetMillis}`.
    struct Policy: Decodable {
        var value: ClockSkewPolicy

        private struct Compensate: Decodable {
            var compensate: Int64
        }

        init(from decoder: any Decoder) throws {
            if let name = try? decoder.singleValueContainer().decode(String.self) {
                guard name == "report" else {
                    let context = DecodingError.Context(codingPath: decoder.codingPath,
                                                        debugDescription: "unknown policy \(name)")
                    throw DecodingError.dataCorrupted(context)
                }
                value = .report
            } else {
                value = .compensate(maximumOffsetMillis: try Compensate(from: decoder).compensate)
            }
        }
    }

    struct Expected: Decodable {
        var sampleOffsetMillis: Int64?
        var estimatedOffsetMillis: Int64?
        var classification: String
        var measuredOffsetMillis: Int64?
        var decision: String
        var retryOffsetMillis: Int64?
    }

    /// The package root: the nearest ancestor of this file with both Package.swift and Vectors/.
    static func packageRoot(from file: String = #filePath) throws -> URL {
        var directory = URL(fileURLWithPath: file).deletingLastPathComponent()
        let fileManager = FileManager.default
        while directory.path != "/" {
            var isDirectory: ObjCBool = false
            if fileManager.fileExists(atPath: directory.appendingPathComponent("Package.swift").path),
                fileManager.fileExists(atPath: directory.appendingPathComponent("Vectors").path, isDirectory: &isDirectory),
                isDirectory.boolValue
            {
                return directory
            }
            directory = directory.deletingLastPathComponent()
        }
        throw VectorFileNotFound(start: file)
    }

    struct VectorFileNotFound: Error, CustomStringConvertible {
        var start: String
        var description: String { "no directory with Package.swift and Vectors/ above \(start)" }
    }

    static func load() throws -> VectorFile {
        let url = try packageRoot().appendingPathComponent("Vectors/clock-skew.json")
        return try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: url))
    }

    @Test func tableIsWellFormed() throws {
        let file = try Self.load()
        #expect(file.rows.count >= 20)
        let ids = file.rows.map(\.id)
        #expect(Set(ids).count == ids.count, "duplicate ids")
        for row in file.rows {
            #expect(!row.comment.isEmpty, "\(row.id): no comment")
            #expect(["definite", "probable", "none"].contains(row.expected.classification), "\(row.id)")
            #expect(["surface", "retry", "none"].contains(row.expected.decision), "\(row.id)")
            #expect((row.expected.decision == "retry") == (row.expected.retryOffsetMillis != nil), "\(row.id)")
        }
    }

    @Test func everyRowMatchesTheCode() throws {
        let file = try Self.load()
        for row in file.rows {
            check(row, in: file)
        }
    }

    private func check(_ row: Row, in file: VectorFile) {
        let input = row.input
        let expected = row.expected
        let id = row.id

        let sample = ClockSkewSample.from(dateHeader: input.dateHeader, ageHeader: input.ageHeader,
                                          sentAtMillis: input.sentAtMillis, receivedAtMillis: input.receivedAtMillis)
        #expect(sample?.offsetMillis == expected.sampleOffsetMillis, "\(id): sampleOffsetMillis")

        let estimator = ClockSkewEstimator(samplesPerServer: file.samplesPerServer)
        for offset in input.previousSamples ?? [] {
            estimator.record(ClockSkewSample(offsetMillis: offset), for: file.server)
        }
        if let sample { estimator.record(sample, for: file.server) }
        let estimate = estimator.estimatedOffsetMillis(for: file.server)
        #expect(estimate == expected.estimatedOffsetMillis, "\(id): estimatedOffsetMillis")

        let classification = ClockSkewClassification.classify(
            status: input.status, body: Array(input.body.utf8), estimatedOffsetMillis: estimate,
            toleranceMillis: input.toleranceMillis, server: file.server,
            requestCreationMillis: input.requestCreationMillis)
        let kind: String
        switch classification {
        case .definite: kind = "definite"
        case .probable: kind = "probable"
        case .notSkew: kind = "none"
        }
        #expect(kind == expected.classification, "\(id): classification")
        let measured = classification.clockSkew?.measuredOffsetMillis
        #expect(measured == expected.measuredOffsetMillis, "\(id): measuredOffsetMillis")
        if let skew = classification.clockSkew {
            #expect(skew.server == file.server && skew.toleranceMillis == input.toleranceMillis, "\(id): skew fields")
        }

        let decision = input.policy.value.decision(
            for: classification, signedWithOffsetMillis: input.priorOffsetMillis, newEstimateMillis: estimate,
            isRetry: input.isRetry, thresholdMillis: file.retryThresholdMillis)
        switch decision {
        case .surface(let skew):
            #expect(expected.decision == "surface", "\(id): decision was surface")
            #expect(skew == classification.clockSkew, "\(id): surfaced skew differs from the classification's")
        case .retry(let offset):
            #expect(expected.decision == "retry", "\(id): decision was retry")
            #expect(offset == expected.retryOffsetMillis, "\(id): retryOffsetMillis")
        case .notSkew:
            #expect(expected.decision == "none", "\(id): decision was none")
        }
    }
}

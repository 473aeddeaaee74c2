import DeviceSigning
import FetchChannelWire
import Foundation

/// `Vectors/clock-skew.json`: every row runs through the real sample → estimator →
/// classification → policy pipeline; every failure names the row id.
public enum ClockSkewVectors: VectorFileChecker {
    public static let fileName = "clock-skew.json"
    public static let summary = "clock-skew decision table"
    public static let minimumRows = 20

    public struct File: Decodable, Sendable {
        public var server: String
        public var samplesPerServer: Int
        public var retryThresholdMillis: Int64
        public var rows: [Row]
    }

    public typealias Row = VectorTableRow<Input, Expected>

    public struct Input: Decodable, Sendable {
        public var sentAtMillis: Int64
        public var receivedAtMillis: Int64
        public var dateHeader: String?
        public var ageHeader: String?
        public var status: Int
        public var body: String
        public var toleranceMillis: Int64
        public var policy: Policy
        public var priorOffsetMillis: Int64
        public var isRetry: Bool
        public var requestCreationMillis: Int64?
        public var previousSamples: [Int64]?
    }

    /// `"report"` or `{"compensate": maximumOffsetMillis}`.
    /// Read whole: it refuses an object member other than `compensate` itself.
    public struct Policy: Decodable, Sendable, VectorValueReadWhole {
        public var value: ClockSkewPolicy

        private struct Compensate: Decodable {
            var compensate: Int64

            private enum CodingKeys: String, CodingKey { case compensate }

            private struct AnyMember: CodingKey {
                let stringValue: String
                var intValue: Int? { nil }
                init(stringValue: String) { self.stringValue = stringValue }
                init?(intValue: Int) { nil }
            }

            init(from decoder: any Decoder) throws {
                compensate = try decoder.container(keyedBy: CodingKeys.self).decode(Int64.self, forKey: .compensate)
                let members = try decoder.container(keyedBy: AnyMember.self)
                if let other = members.allKeys.first(where: { $0.stringValue != "compensate" }) {
                    let context = DecodingError.Context(
                        codingPath: members.codingPath + [other], debugDescription: "a member no checker reads")
                    throw DecodingError.dataCorrupted(context)
                }
            }
        }

        public init(from decoder: any Decoder) throws {
            if let name = try? decoder.singleValueContainer().decode(String.self) {
                guard name == "report" else {
                    let context = DecodingError.Context(
                        codingPath: decoder.codingPath, debugDescription: "unknown policy \(name)")
                    throw DecodingError.dataCorrupted(context)
                }
                value = .report
            } else {
                value = .compensate(maximumOffsetMillis: try Compensate(from: decoder).compensate)
            }
        }
    }

    public struct Expected: Decodable, Sendable {
        public var sampleOffsetMillis: Int64?
        public var estimatedOffsetMillis: Int64?
        public var classification: String
        public var measuredOffsetMillis: Int64?
        public var decision: String
        public var retryOffsetMillis: Int64?
    }

    public static func check(_ file: File, into report: inout VectorFileReport) {
        // The table states the client's own window and threshold: one it does not use would
        // pin another pipeline (and an absurd window would exhaust memory).
        guard file.samplesPerServer == ClockSkewEstimator.defaultSamplesPerServer,
            file.retryThresholdMillis == ClockSkewPolicy.defaultRetryThresholdMillis
        else {
            report.fail(
                "samplesPerServer and retryThresholdMillis must be the client's "
                    + "(\(ClockSkewEstimator.defaultSamplesPerServer), \(ClockSkewPolicy.defaultRetryThresholdMillis)); "
                    + "the file says \(file.samplesPerServer), \(file.retryThresholdMillis)")
            return
        }
        // The table is well formed.
        report.expect(atLeast: minimumRows, "rows", in: file.rows.count, of: "table")
        let ids = file.rows.map(\.id)
        report.expect(Set(ids).count == ids.count, "duplicate row ids")
        for row in file.rows {
            report.expect(!row.comment.isEmpty, "\(row.id): no comment")
            report.expect(
                ["definite", "probable", "none"].contains(row.expected.classification),
                "\(row.id): unknown classification \(row.expected.classification)")
            report.expect(
                ["surface", "retry", "none"].contains(row.expected.decision),
                "\(row.id): unknown decision \(row.expected.decision)")
            report.expect(
                (row.expected.decision == "retry") == (row.expected.retryOffsetMillis != nil),
                "\(row.id): retryOffsetMillis must be given exactly for a retry")
        }
        // Every row matches the code.
        for row in file.rows {
            report.casesChecked += 1
            check(row, in: file, into: &report)
        }
    }

    private static func check(_ row: Row, in file: File, into report: inout VectorFileReport) {
        let input = row.input
        let expected = row.expected
        let id = row.id

        let sample = ClockSkewSample.from(
            dateHeader: input.dateHeader, ageHeader: input.ageHeader,
            sentAtMillis: input.sentAtMillis, receivedAtMillis: input.receivedAtMillis)
        report.expect(
            sample?.offsetMillis == expected.sampleOffsetMillis,
            "\(id): sampleOffsetMillis is \(text(sample?.offsetMillis)), expected \(text(expected.sampleOffsetMillis))")

        let estimator = ClockSkewEstimator(samplesPerServer: file.samplesPerServer)
        for offset in input.previousSamples ?? [] {
            estimator.record(ClockSkewSample(offsetMillis: offset), for: file.server)
        }
        if let sample { estimator.record(sample, for: file.server) }
        let estimate = estimator.estimatedOffsetMillis(for: file.server)
        report.expect(
            estimate == expected.estimatedOffsetMillis,
            "\(id): estimatedOffsetMillis is \(text(estimate)), expected \(text(expected.estimatedOffsetMillis))")

        let classification = ClockSkewClassification.classify(
            status: input.status, body: Array(input.body.utf8), estimatedOffsetMillis: estimate,
            toleranceMillis: input.toleranceMillis, server: file.server,
            requestCreationMillis: input.requestCreationMillis, signedWithOffsetMillis: input.priorOffsetMillis)
        let kind: String
        switch classification {
        case .definite: kind = "definite"
        case .probable: kind = "probable"
        case .notSkew: kind = "none"
        }
        report.expect(
            kind == expected.classification, "\(id): classification is \(kind), expected \(expected.classification)")
        let measured = classification.clockSkew?.measuredOffsetMillis
        report.expect(
            measured == expected.measuredOffsetMillis,
            "\(id): measuredOffsetMillis is \(text(measured)), expected \(text(expected.measuredOffsetMillis))")
        if let skew = classification.clockSkew {
            report.expect(
                skew.server == file.server && skew.toleranceMillis == input.toleranceMillis, "\(id): skew fields")
        }

        let decision = input.policy.value.decision(
            for: classification, signedWithOffsetMillis: input.priorOffsetMillis, newEstimateMillis: estimate,
            isRetry: input.isRetry, thresholdMillis: file.retryThresholdMillis)
        switch decision {
        case .surface(let skew):
            report.expect(expected.decision == "surface", "\(id): decision was surface, expected \(expected.decision)")
            report.expect(skew == classification.clockSkew, "\(id): surfaced skew differs from the classification's")
        case .retry(let offset):
            report.expect(expected.decision == "retry", "\(id): decision was retry, expected \(expected.decision)")
            report.expect(
                offset == expected.retryOffsetMillis,
                "\(id): retryOffsetMillis is \(offset), expected \(text(expected.retryOffsetMillis))")
        case .notSkew:
            report.expect(expected.decision == "none", "\(id): decision was none, expected \(expected.decision)")
        }
    }

    private static func text(_ value: Int64?) -> String {
        value.map(String.init) ?? "null"
    }
}

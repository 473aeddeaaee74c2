import DeviceSigning
import FetchChannel
import Foundation

/// `Vectors/error-mapping.json`: every row runs through the real sample recording
/// (`FetchErrorMapping.recordSample`) and `FetchErrorMapping.map`; every failure names the row id.
public enum ErrorMappingVectors: VectorFileChecker {
    public static let fileName = "error-mapping.json"
    public static let summary = "fetch error mapping table"
    public static let minimumRows = 25
    /// Every outcome the table must show at least once.
    public static let requiredCodes = [
        "success", "clockSkewTooBig", "networkError", "operationNotSupportedByBackend",
        "unauthorized", "invalidResponse", "serverError", "unknown",
    ]

    public struct File: Decodable, Sendable {
        public var server: String
        public var rows: [Row]

        public init(server: String, rows: [Row]) {
            self.server = server
            self.rows = rows
        }
    }

    public typealias Row = VectorTableRow<Input, Expected>

    public struct Input: Decodable, Sendable {
        public var sentAtMillis: Int64
        public var receivedAtMillis: Int64
        public var toleranceMillis: Int64
        public var previousSamples: [Int64]?
        public var requestCreationMillis: Int64?
        public var deviceSignature: String?
        public var answer: Answer?
        public var transportFailure: Failure?
        public var notHTTP: String?

        private enum CodingKeys: String, CodingKey {
            case sentAtMillis, receivedAtMillis, toleranceMillis, previousSamples, requestCreationMillis
            case deviceSignature, answer, transportFailure, notHTTP
        }

        /// Optional members may be absent but not null: a `"notHTTP": null` beside an answer
        /// would be a second transport that nothing uses.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            sentAtMillis = try c.decode(Int64.self, forKey: .sentAtMillis)
            receivedAtMillis = try c.decode(Int64.self, forKey: .receivedAtMillis)
            toleranceMillis = try c.decode(Int64.self, forKey: .toleranceMillis)
            previousSamples = try c.decodeUnlessAbsent([Int64].self, forKey: .previousSamples)
            requestCreationMillis = try c.decodeUnlessAbsent(Int64.self, forKey: .requestCreationMillis)
            deviceSignature = try c.decodeUnlessAbsent(String.self, forKey: .deviceSignature)
            answer = try c.decodeUnlessAbsent(Answer.self, forKey: .answer)
            transportFailure = try c.decodeUnlessAbsent(Failure.self, forKey: .transportFailure)
            notHTTP = try c.decodeUnlessAbsent(String.self, forKey: .notHTTP)
        }
    }

    public struct Answer: Decodable, Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: String
        public var bodyWasCutOff: Bool?
    }

    public struct Failure: Decodable, Sendable {
        public var kind: String
        public var detail: String
    }

    /// A member that may be absent (not checked), null (must be nil) or a value.
    public enum Checked<Value: Decodable & Equatable & Sendable>: Equatable, Sendable {
        case absent
        case value(Value?)
    }

    public struct Expected: Decodable, Sendable {
        public var code: String
        public var tokens: [String]?
        public var status: Int?
        public var networkKind: String?
        public var invalidResponseKind: String?
        public var excerpt: String?
        public var excerptUTF8Bytes: Int?
        public var bodyByteCount: Int?
        public var toleranceMillis: Int64?
        public var measuredOffsetMillis: Checked<Int64>
        public var estimatedOffsetMillis: Checked<Int64>

        private enum CodingKeys: String, CodingKey {
            case code, tokens, status, networkKind, excerpt, excerptUTF8Bytes, bodyByteCount, toleranceMillis
            case invalidResponseKind, measuredOffsetMillis, estimatedOffsetMillis
        }

        /// Members other than the two `Checked` ones may be absent but not null: a `null` would be
        /// present and check nothing.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            code = try c.decode(String.self, forKey: .code)
            tokens = try c.decodeUnlessAbsent([String].self, forKey: .tokens)
            status = try c.decodeUnlessAbsent(Int.self, forKey: .status)
            networkKind = try c.decodeUnlessAbsent(String.self, forKey: .networkKind)
            invalidResponseKind = try c.decodeUnlessAbsent(String.self, forKey: .invalidResponseKind)
            excerpt = try c.decodeUnlessAbsent(String.self, forKey: .excerpt)
            excerptUTF8Bytes = try c.decodeUnlessAbsent(Int.self, forKey: .excerptUTF8Bytes)
            bodyByteCount = try c.decodeUnlessAbsent(Int.self, forKey: .bodyByteCount)
            toleranceMillis = try c.decodeUnlessAbsent(Int64.self, forKey: .toleranceMillis)
            func checked(_ key: CodingKeys) throws -> Checked<Int64> {
                c.contains(key) ? .value(try c.decodeIfPresent(Int64.self, forKey: key)) : .absent
            }
            measuredOffsetMillis = try checked(.measuredOffsetMillis)
            estimatedOffsetMillis = try checked(.estimatedOffsetMillis)
        }

        /// The members present besides `code` and `estimatedOffsetMillis` (which apply to every
        /// row), by their names in the file.
        var outcomeMembers: [String] {
            let present: [(CodingKeys, Bool)] = [
                (.tokens, tokens != nil), (.status, status != nil), (.networkKind, networkKind != nil),
                (.invalidResponseKind, invalidResponseKind != nil), (.excerpt, excerpt != nil),
                (.excerptUTF8Bytes, excerptUTF8Bytes != nil), (.bodyByteCount, bodyByteCount != nil),
                (.toleranceMillis, toleranceMillis != nil), (.measuredOffsetMillis, measuredOffsetMillis != .absent),
            ]
            return present.filter(\.1).map(\.0.rawValue)
        }
    }

    /// The errors that carry the HTTP answer (`httpError`): `status`, `excerpt`,
    /// `excerptUTF8Bytes` and `bodyByteCount` apply to these.
    static let codesWithAnAnswer: Set<String> = [
        "clockSkewTooBig", "operationNotSupportedByBackend", "unauthorized", "serverError", "unknown",
    ]

    /// The outcomes (`expected.code`) each member of `expected` applies to, as Vectors/README.md
    /// lists them; `code` and `estimatedOffsetMillis` apply to every row. A member on a row it does
    /// not apply to would be skipped (a `success` row has no error to compare it with) or hold
    /// only for want of a value: the row fails instead.
    static let outcomesOfMember: [String: Set<String>] = [
        "tokens": ["success"],
        "status": codesWithAnAnswer,
        "excerpt": codesWithAnAnswer,
        "excerptUTF8Bytes": codesWithAnAnswer,
        "bodyByteCount": codesWithAnAnswer,
        "networkKind": ["networkError"],
        "invalidResponseKind": ["invalidResponse"],
        "toleranceMillis": ["clockSkewTooBig"],
        "measuredOffsetMillis": ["clockSkewTooBig"],
    ]

    public static func check(_ file: File, into report: inout VectorFileReport) {
        report.failures += tableProblems(file)
        for row in file.rows {
            report.casesChecked += 1
            report.failures += problems(of: row, in: file)
        }
    }

    /// What is wrong with the table as a whole: too few rows, duplicate ids, an outcome no row shows.
    public static func tableProblems(_ file: File) -> [String] {
        var problems: [String] = []
        if file.rows.count < minimumRows {
            problems.append("the table has \(file.rows.count) rows; at least \(minimumRows) are required")
        }
        if Set(file.rows.map(\.id)).count != file.rows.count {
            problems.append("row ids must be unique")
        }
        let codes = Set(file.rows.map(\.expected.code))
        for code in requiredCodes where !codes.contains(code) {
            problems.append("no row expects \(code)")
        }
        return problems
    }

    /// Runs one row; each disagreement starts with the row id.
    public static func problems(of row: Row, in file: File) -> [String] {
        var report = VectorFileReport(file: fileName)
        let id = row.id
        let server = file.server
        let input = row.input

        let estimator = ClockSkewEstimator()
        for offset in input.previousSamples ?? [] {
            estimator.record(ClockSkewSample(offsetMillis: offset), for: server)
        }
        let transports = [
            ("answer", input.answer != nil), ("transportFailure", input.transportFailure != nil),
            ("notHTTP", input.notHTTP != nil),
        ].filter(\.1).map(\.0)
        guard transports.count == 1 else {
            let present = transports.isEmpty ? "none" : transports.joined(separator: " and ")
            return ["\(id): the input needs exactly one of answer, transportFailure and notHTTP; it has \(present)"]
        }
        for member in row.expected.outcomeMembers where outcomesOfMember[member]?.contains(row.expected.code) != true {
            report.fail("\(id): expected.\(member) does not apply to a row that expects \(row.expected.code)")
        }
        let transport: TransportResult
        if let answer = input.answer {
            let received = HTTPAnswer(
                status: answer.status, headers: answer.headers, body: Data(answer.body.utf8),
                bodyWasCutOff: answer.bodyWasCutOff ?? false)
            FetchErrorMapping.recordSample(
                of: received, sentAtMillis: input.sentAtMillis, receivedAtMillis: input.receivedAtMillis,
                server: server, into: estimator)
            transport = .answer(received)
        } else if let failure = input.transportFailure {
            guard let kind = NetworkFailure.Code.allCases.first(where: { $0.rawValue == failure.kind }) else {
                return ["\(id): unknown transport failure kind \(failure.kind)"]
            }
            transport = .failure(NetworkFailure(kind, detail: failure.detail))
        } else if let notHTTP = input.notHTTP {
            transport = .notHTTP(notHTTP)
        } else {
            return ["\(id): the input has no answer, transportFailure or notHTTP"]  // Never: counted above.
        }
        let estimate = estimator.estimatedOffsetMillis(for: server)
        if case .value(let expected) = row.expected.estimatedOffsetMillis {
            report.expect(estimate == expected, "\(id): estimate is \(text(estimate)), expected \(text(expected))")
        }

        let context = FetchErrorMapping.Context(
            server: server, estimatedOffsetMillis: estimate, toleranceMillis: input.toleranceMillis,
            requestCreationMillis: input.requestCreationMillis, deviceSignature: input.deviceSignature)
        let expected = row.expected
        switch FetchErrorMapping.map(transport, context: context) {
        case .success(let operations):
            report.expect(
                expected.code == "success", "\(id): got \(operations.count) operations, expected \(expected.code)")
            if let tokens = expected.tokens {
                report.expect(
                    operations.map(\.token) == tokens, "\(id): tokens \(operations.map(\.token)), expected \(tokens)")
            }
            report.expect(operations.allSatisfy { $0.server == server }, "\(id): operations name their server")
        case .failure(let error):
            report.expect(error.code == expected.code, "\(id): got \(error.code), expected \(expected.code) (\(error))")
            report.expect(error.server == server, "\(id): the error names its server")
            report.expect(!error.message.isEmpty, "\(id): message")
            if let status = expected.status {
                report.expect(
                    error.httpError?.status == status,
                    "\(id): status \(error.httpError.map { String($0.status) } ?? "none"), expected \(status)")
            }
            if let kind = expected.networkKind {
                report.expect(
                    error.networkFailure?.kind.rawValue == kind,
                    "\(id): network kind \(error.networkFailure?.kind.rawValue ?? "none"), expected \(kind)")
            }
            if let kind = expected.invalidResponseKind {
                report.expect(
                    error.invalidResponse?.kind.rawValue == kind,
                    "\(id): invalid response kind \(error.invalidResponse?.kind.rawValue ?? "none"), expected \(kind)")
            }
            if let excerpt = expected.excerpt {
                report.expect(error.httpError?.bodyExcerpt == excerpt, "\(id): excerpt")
            }
            if let bytes = expected.excerptUTF8Bytes {
                report.expect(error.httpError?.bodyExcerpt.utf8.count == bytes, "\(id): excerpt size")
            }
            if let count = expected.bodyByteCount {
                report.expect(error.httpError?.bodyByteCount == count, "\(id): body size")
            }
            if expected.code == "clockSkewTooBig" {
                report.expect(error.toleranceMillis == input.toleranceMillis, "\(id): tolerance")
            }
            if let tolerance = expected.toleranceMillis {
                report.expect(error.toleranceMillis == tolerance, "\(id): tolerance")
            }
            if case .value(let measured) = expected.measuredOffsetMillis {
                report.expect(
                    error.measuredOffsetMillis == measured,
                    "\(id): measured offset \(text(error.measuredOffsetMillis)), expected \(text(measured))")
            }
            if let signature = input.deviceSignature, let excerpt = error.httpError?.bodyExcerpt {
                report.expect(!excerpt.contains(signature), "\(id): the excerpt holds the signature")
                let signaturePart = String(signature.split(separator: ".").last ?? "")
                report.expect(!excerpt.contains(signaturePart), "\(id): the excerpt holds the signature part")
            }
        }
        return report.failures
    }

    private static func text(_ value: Int64?) -> String {
        value.map(String.init) ?? "null"
    }
}

import DeviceSigning
import FetchChannel
import Foundation
import Testing

/// Runs every row of Vectors/error-mapping.json through the real sample recording and
/// `FetchErrorMapping.map`; every failure names the row id.
@Suite struct ErrorMappingVectorTests {
    struct VectorFile: Decodable, Sendable {
        var server: String
        var rows: [Row]
    }

    struct Row: Decodable, Sendable {
        var id: String
        var comment: String
        var input: Input
        var expected: Expected
    }

    struct Input: Decodable, Sendable {
        var sentAtMillis: Int64
        var receivedAtMillis: Int64
        var toleranceMillis: Int64
        var previousSamples: [Int64]?
        var requestCreationMillis: Int64?
        var deviceSignature: String?
        var answer: Answer?
        var transportFailure: Failure?
        var notHTTP: String?
    }

    struct Answer: Decodable, Sendable {
        var status: Int
        var headers: [String: String]
        var body: String
        var bodyWasCutOff: Bool?
    }

    struct Failure: Decodable, Sendable {
        var kind: String
        var detail: String
    }

    /// A member that may be absent (not checked), null (must be nil) or a value.
    enum Checked<Value: Decodable & Equatable & Sendable>: Equatable, Sendable {
        case absent
        case value(Value?)
    }

    struct Expected: Decodable, Sendable {
        var code: String
        var tokens: [String]?
        var status: Int?
        var networkKind: String?
        var excerpt: String?
        var excerptUTF8Bytes: Int?
        var bodyByteCount: Int?
        var toleranceMillis: Int64?
        var measuredOffsetMillis: Checked<Int64>
        var estimatedOffsetMillis: Checked<Int64>

        private enum CodingKeys: String, CodingKey {
            case code, tokens, status, networkKind, excerpt, excerptUTF8Bytes, bodyByteCount, toleranceMillis
            case measuredOffsetMillis, estimatedOffsetMillis
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            code = try c.decode(String.self, forKey: .code)
            tokens = try c.decodeIfPresent([String].self, forKey: .tokens)
            status = try c.decodeIfPresent(Int.self, forKey: .status)
            networkKind = try c.decodeIfPresent(String.self, forKey: .networkKind)
            excerpt = try c.decodeIfPresent(String.self, forKey: .excerpt)
            excerptUTF8Bytes = try c.decodeIfPresent(Int.self, forKey: .excerptUTF8Bytes)
            bodyByteCount = try c.decodeIfPresent(Int.self, forKey: .bodyByteCount)
            toleranceMillis = try c.decodeIfPresent(Int64.self, forKey: .toleranceMillis)
            func checked(_ key: CodingKeys) throws -> Checked<Int64> {
                c.contains(key) ? .value(try c.decodeIfPresent(Int64.self, forKey: key)) : .absent
            }
            measuredOffsetMillis = try checked(.measuredOffsetMillis)
            estimatedOffsetMillis = try checked(.estimatedOffsetMillis)
        }
    }

    static let file: VectorFile = {
        let url = FetchTestSupport.packageRoot.appendingPathComponent("Vectors/error-mapping.json")
        // A missing or broken file fails every test that reads it, with the decoding error.
        return (try? JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: url))) ?? VectorFile(server: "", rows: [])
    }()

    @Test func fileHasEnoughUniqueRows() throws {
        let url = FetchTestSupport.packageRoot.appendingPathComponent("Vectors/error-mapping.json")
        let file = try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: url))
        #expect(file.rows.count >= 25)
        #expect(Set(file.rows.map(\.id)).count == file.rows.count, "row ids must be unique")
        let codes = Set(file.rows.map(\.expected.code))
        for code in ["success", "clockSkewTooBig", "networkError", "operationNotSupportedByBackend", "unauthorized",
                     "invalidResponse", "serverError", "unknown"] {
            #expect(codes.contains(code), "no row expects \(code)")
        }
    }

    @Test(arguments: file.rows.map(\.id))
    func row(_ id: String) throws {
        let row = try #require(Self.file.rows.first { $0.id == id }, "row \(id)")
        let server = Self.file.server
        let input = row.input

        let estimator = ClockSkewEstimator()
        for offset in input.previousSamples ?? [] {
            estimator.record(ClockSkewSample(offsetMillis: offset), for: server)
        }
        let transport: TransportResult
        if let answer = input.answer {
            let received = HTTPAnswer(status: answer.status, headers: answer.headers, body: Data(answer.body.utf8),
                                      bodyWasCutOff: answer.bodyWasCutOff ?? false)
            FetchErrorMapping.recordSample(of: received, sentAtMillis: input.sentAtMillis, receivedAtMillis: input.receivedAtMillis,
                                           server: server, into: estimator)
            transport = .answer(received)
        } else if let failure = input.transportFailure {
            let kind = try #require(NetworkFailure.Kind(rawValue: failure.kind), "\(id): unknown kind \(failure.kind)")
            transport = .failure(NetworkFailure(kind, detail: failure.detail))
        } else {
            transport = .notHTTP(try #require(input.notHTTP, "\(id): no input"))
        }
        let estimate = estimator.estimatedOffsetMillis(for: server)
        if case .value(let expected) = row.expected.estimatedOffsetMillis {
            #expect(estimate == expected, "\(id): estimate")
        }

        let context = FetchErrorMapping.Context(server: server, estimatedOffsetMillis: estimate, toleranceMillis: input.toleranceMillis,
                                                requestCreationMillis: input.requestCreationMillis, deviceSignature: input.deviceSignature)
        let expected = row.expected
        switch FetchErrorMapping.map(transport, context: context) {
        case .success(let operations):
            #expect(expected.code == "success", "\(id): got \(operations.count) operations, expected \(expected.code)")
            if let tokens = expected.tokens { #expect(operations.map(\.token) == tokens, "\(id): tokens") }
            #expect(operations.allSatisfy { $0.server == server }, "\(id): operations name their server")
        case .failure(let error):
            #expect(error.code == expected.code, "\(id): \(error)")
            #expect(error.server == server, "\(id): the error names its server")
            #expect(!error.message.isEmpty, "\(id): message")
            if let status = expected.status { #expect(error.httpError?.status == status, "\(id): status") }
            if let kind = expected.networkKind { #expect(error.networkFailure?.kind.rawValue == kind, "\(id): network kind") }
            if let excerpt = expected.excerpt { #expect(error.httpError?.bodyExcerpt == excerpt, "\(id): excerpt") }
            if let bytes = expected.excerptUTF8Bytes { #expect(error.httpError?.bodyExcerpt.utf8.count == bytes, "\(id): excerpt size") }
            if let count = expected.bodyByteCount { #expect(error.httpError?.bodyByteCount == count, "\(id): body size") }
            if expected.code == "clockSkewTooBig" {
                #expect(error.toleranceMillis == input.toleranceMillis, "\(id): tolerance")
            }
            if let tolerance = expected.toleranceMillis { #expect(error.toleranceMillis == tolerance, "\(id): tolerance") }
            if case .value(let measured) = expected.measuredOffsetMillis {
                #expect(error.measuredOffsetMillis == measured, "\(id): measured offset")
            }
            if let signature = input.deviceSignature, let excerpt = error.httpError?.bodyExcerpt {
                #expect(!excerpt.contains(signature), "\(id): the excerpt holds the signature")
                let signaturePart = String(signature.split(separator: ".").last ?? "")
                #expect(!excerpt.contains(signaturePart), "\(id): the excerpt holds the signature part")
            }
        }
    }
}

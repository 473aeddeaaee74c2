import FetchChannel
import Foundation

/// `Vectors/pending-operations.json`: answer bodies of the pending-operations endpoint → the
/// operations after decoding and ordering, or `invalidResponse`.
public enum PendingOperationsVectors: VectorFileChecker {
    public static let fileName = "pending-operations.json"
    public static let summary = "pending-operations answer bodies"
    public static let minimumCases = 20
    /// The server every case's operations are attributed to.
    static let server = "https://backend.example"

    public struct File: Decodable, Sendable { public let cases: [Case] }
    public struct Case: Decodable, Sendable {
        public let id: Int
        public let name: String
        public let body: String
        public let expected: Expected
    }
    public struct Expected: Decodable, Sendable {
        public let operations: [ExpectedOperation]?
        public let invalidResponse: Bool?
        /// The ``InvalidResponse`` kind, with `invalidResponse: true`.
        public let invalidResponseKind: String?
    }
    public struct ExpectedOperation: Decodable, Sendable, Equatable, CustomStringConvertible {
        public let creationTimeInEpochMillis: Int64
        public let dispatchChannel: String
        public let token: String
        public var description: String { "(\(creationTimeInEpochMillis), \(dispatchChannel), \(token))" }
    }

    public static func check(_ file: File, into report: inout VectorFileReport) {
        report.checkEach(file.cases, atLeast: minimumCases, "cases") { vector, report in
            let label = "vector \(vector.id) \(vector.name)"
            let wantsInvalid = vector.expected.invalidResponse == true
            report.expect(
                wantsInvalid != (vector.expected.operations != nil),
                "\(label): expected must be either operations or invalidResponse: true")
            report.expect(
                wantsInvalid == (vector.expected.invalidResponseKind != nil),
                "\(label): invalidResponseKind goes with invalidResponse: true, and only there")
            do throws(InvalidResponse) {
                let decoded = try PendingOperationsDecoder.decode(Data(vector.body.utf8), server: server)
                let ordered = OperationOrdering.merged([decoded]).map {
                    ExpectedOperation(
                        creationTimeInEpochMillis: $0.creationTimeInEpochMillis,
                        dispatchChannel: $0.dispatchChannel.wireValue, token: $0.token)
                }
                if wantsInvalid {
                    report.fail("\(label): decoded \(ordered.count) operations but must be invalidResponse")
                } else {
                    report.expect(
                        ordered == vector.expected.operations,
                        "\(label): got \(ordered), expected \(vector.expected.operations ?? [])")
                }
            } catch {
                report.expect(wantsInvalid, "\(label): unexpected invalidResponse: \(error)")
                let expectedKind = vector.expected.invalidResponseKind ?? "none"
                report.expect(
                    !wantsInvalid || error.kind.rawValue == expectedKind,
                    "\(label): invalidResponse of kind \(error.kind.rawValue), expected \(expectedKind)")
            }
        }
    }
}

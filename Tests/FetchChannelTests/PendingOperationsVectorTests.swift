import FetchChannel
import FetchChannelTestSupport
import FetchChannelVectors
import Foundation
import Testing

/// Vectors/pending-operations.json through `PendingOperationsVectors` (also run by `fetchchannel
/// vectors verify`): each body decodes to its ordered operations or is an invalidResponse; each
/// failure names the vector id and name.
@Suite struct PendingOperationsVectorTests {
    @Test func everyVectorDecodesAsExpected() throws {
        let root = PackageLocations.root
        let data = try Data(
            contentsOf: root.appendingPathComponent("Vectors").appendingPathComponent(PendingOperationsVectors.fileName)
        )
        let report = PendingOperationsVectors.check(data)
        report.recordFailures()
        let file = try PendingOperationsVectors.decode(data)
        #expect(file.cases.count >= PendingOperationsVectors.minimumCases)
        #expect(report.casesChecked == file.cases.count)
    }

    @Test func unknownChannelIsKeptAsOther() throws {
        let body =
            #"{"operations":[{"creationTimeInEpochMillis":1,"dispatchChannel":"sms","payload":{"contentType":"c","version":"1","redeemData":{"token":"t","redeemUrl":"u"}}}]}"#
        let operations = try PendingOperationsDecoder.decode(Data(body.utf8), server: "s")
        #expect(operations.first?.dispatchChannel == .other("sms"))
        #expect(operations.first?.server == "s")
    }

    @Test func dataIsKeptExactly() throws {
        let body =
            #"{"operations":[{"creationTimeInEpochMillis":1,"dispatchChannel":"link","payload":{"contentType":"c","version":"1","redeemData":{"token":"t","redeemUrl":"u"},"data":{"a":[1,2.5,true,null,"x"]}}}]}"#
        let operation = try #require(try PendingOperationsDecoder.decode(Data(body.utf8), server: "s").first)
        #expect(
            operation.payload.data
                == .object(["a": .array([.integer(1), .number(2.5), .bool(true), .null, .string("x")])]))
    }

    @Test func oversizedBodyIsInvalid() {
        let body = Data(repeating: 0x20, count: PendingOperationsDecoder.maximumBodyBytes + 1)
        #expect(throws: InvalidResponse(.tooLarge, reason: "")) {
            try PendingOperationsDecoder.decode(body, server: "s")
        }
    }

    /// Not JSON, or JSON that is not the answer: `malformed`, with the reason saying which.
    @Test func otherRefusalsAreMalformed() {
        let notJSON = #expect(throws: InvalidResponse(.malformed, reason: "")) {
            try PendingOperationsDecoder.decode(Data("{".utf8), server: "s")
        }
        #expect(notJSON?.reason.hasPrefix("The answer is not valid JSON") == true)
        #expect(throws: InvalidResponse(.malformed, reason: "")) {
            try PendingOperationsDecoder.decode(Data(#"{"operations":{}}"#.utf8), server: "s")
        }
    }

    @Test func mergeAcrossServersIsStableAndDeduplicated() {
        func operation(_ time: Int64, _ token: String, _ server: String) -> PendingOutOfBandOperation {
            PendingOutOfBandOperation(
                creationTimeInEpochMillis: time, dispatchChannel: .link,
                payload: .init(contentType: "c", version: "1", redeemData: .init(token: token, redeemUrl: "u")),
                server: server)
        }
        let a = [operation(3, "x", "https://a"), operation(1, "y", "https://a")]
        let b = [operation(2, "z", "https://b"), operation(1, "w", "https://b"), operation(5, "x", "https://b")]
        let merged = OperationOrdering.merged([b, a])
        #expect(merged.map(\.token) == ["y", "w", "z", "x"])
        #expect(merged == OperationOrdering.merged([a, b]))
    }
}

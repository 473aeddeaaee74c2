import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelEmulator

/// What the emulator cannot write as JSON is said, never stored or answered as `{}`.
@Suite struct BackendSerializationFailureTests {
    static func operation(data: Any) -> StoredOperation? {
        StoredOperation(
            deviceId: "phone", kind: .authentication, creationTimeMillis: 1_750_000_000_000,
            expiresAtMillis: 1_750_000_060_000, channel: "link", token: "token",
            redeemURL: "https://backend.example/redeem", data: JSONObjectText(object: data))
    }

    /// Before, such an operation was made with `{}` as its JSON, stored, and listed in every
    /// answer of its device as an operation no client reads. Dispatch refuses it (500
    /// `SERIALIZATION_FAILED`) when it is not made.
    @Test func anOperationThatCannotBeWrittenAsJSONIsNotMade() {
        for data in [["value": Double.nan], ["value": Double.infinity], ["value": Date()], [[Double.nan]]] as [Any] {
            #expect(Self.operation(data: data) == nil, "\(data)")
        }
        #expect(Self.operation(data: ["value": 1, "list": ["a", NSNull()]])?.json.isEmpty == false)
    }

    /// Before, 200 `{}`: a success that said nothing. Now a 500 with an error body in the shape
    /// of every other.
    @Test func anAnswerThatCannotBeWrittenAsJSONIs500WithAnErrorBody() throws {
        for response in [
            BackendResponses.json(.ok, ["value": Double.nan]),
            BackendResponses.error(.badRequest, WireErrorCode.malformedRequest, "why", extra: ["at": Date()]),
        ] {
            #expect(response.status == 500)
            #expect(response.headers.values(for: WireHeader.contentType) == [WireMediaType.json])
            let body = try #require(try JSONSerialization.jsonObject(with: response.bodyData) as? [String: Any])
            #expect(body[WireErrorCode.Member.errorCode] as? String == WireErrorCode.serializationFailed.rawValue)
            #expect(body[WireErrorCode.Member.message] as? String == "The emulator could not write its answer as JSON.")
        }
        #expect(BackendResponses.json(.ok, ["value": 1]).status == 200)
    }
}

import DeviceSigning
import Foundation
import Testing

@testable import FetchChannel

/// `PendingOperationsDecoder` on the package's strict JSON reader (`StrictJSON.parse`, tested in
/// DeviceSigningTests): the reader's rules hold inside an operations answer.
@Suite struct PendingOperationsStrictnessTests {
    private func answer(creation: String = "1", extra: String = "", data: String = "null") -> String {
        #"{"operations":[{"creationTimeInEpochMillis":\#(creation),"dispatchChannel":"link",\#(extra)"#
            + #""payload":{"contentType":"c","version":"1","redeemData":{"token":"t","redeemUrl":"u"},"#
            + #""data":\#(data)}}]}"#
    }

    @Test(arguments: [
        #""dispatchChannel":"png-qr-code","#,
        #""creationTimeInEpochMillis":2,"#,
    ])
    func duplicateMembersSpoilTheAnswer(extra: String) {
        #expect(throws: PendingOperationsDecoder.InvalidResponse.self) {
            try PendingOperationsDecoder.decode(Data(answer(extra: extra).utf8), server: "s")
        }
    }

    @Test(arguments: ["1.0", "1e3", "9223372036854775808", "-9223372036854775809", "\"1\"", "true"])
    func creationTimeMustBeA64BitInteger(creation: String) {
        #expect(throws: PendingOperationsDecoder.InvalidResponse.self) {
            try PendingOperationsDecoder.decode(Data(answer(creation: creation).utf8), server: "s")
        }
    }

    @Test func dataIsKeptExactlyAndItsDepthIsBounded() throws {
        let data = #"{"n":9007199254740993,"x":[1e2]}"#
        let kept = try PendingOperationsDecoder.decode(Data(answer(data: data).utf8), server: "s")
        let expected = JSONValue.object(["n": .integer(9_007_199_254_740_993), "x": .array([.number(100)])])
        #expect(kept.first?.payload.data == expected)
        let absent = try PendingOperationsDecoder.decode(Data(answer().utf8), server: "s")
        #expect(absent.first?.payload.data == nil, "null is absent")
        let depth = StrictJSON.Limits.standard.maximumDepth
        let tooDeep = answer(data: String(repeating: "[", count: depth) + String(repeating: "]", count: depth))
        #expect(throws: PendingOperationsDecoder.InvalidResponse.self) {
            try PendingOperationsDecoder.decode(Data(tooDeep.utf8), server: "s")
        }
    }

    @Test func trailingBytesAndBadUTF8SpoilTheAnswer() {
        // Text after the object; a byte after it that is not UTF-8; U+FFFD (EF BF BD) made EF BF FF in `data`.
        let bodies: [[UInt8]] = [
            Array((answer() + "x").utf8), Array(answer().utf8) + [0xFF],
            Array(answer(data: "\"\u{FFFD}\"").utf8).map { $0 == 0xBD ? 0xFF : $0 },
        ]
        for body in bodies {
            #expect(throws: PendingOperationsDecoder.InvalidResponse.self) {
                try PendingOperationsDecoder.decode(Data(body), server: "s")
            }
        }
    }
}

import Foundation
import Testing

@testable import FetchChannelCLI

/// The CLI's own backend answers are read by the package's strict reader: an object that names
/// a member twice (a registration's `id`, an `errorCode`) is no object.
@Suite struct BackendAnswerTests {
    @Test(arguments: [
        #"{"id":"t1","id":"t2"}"#, #"{"errorCode":"INVALID_SIGNATURE","errorCode":"CLOCK_SKEW_TOO_BIG"}"#,
        #"{"id":"t1","extId":{"a":1,"a":2}}"#,
    ])
    func anAnswerWithAMemberTwiceIsNoObject(body: String) {
        #expect(BackendHTTPClient.Answer(status: 201, body: Data(body.utf8)).object == nil)
    }

    @Test func anAnswerWithDistinctMembersIsOne() {
        let answer = BackendHTTPClient.Answer(status: 201, body: Data(#"{"id":"t1","extId":"e1"}"#.utf8))
        #expect(answer.object?["id"] as? String == "t1")
    }
}

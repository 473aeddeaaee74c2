import Foundation
import Testing

@testable import FetchChannel

/// The remembered origins of redeem URLs answer exactly what parsing the text answers.
@Suite struct RedeemURLOriginsTests {
    private func parsed(_ text: String) -> BackendOrigin? {
        URL(string: text).flatMap(BackendOrigin.init(url:))
    }

    /// Two spellings of one Swift string (é precomposed, and e with a combining accent) are two
    /// URLs with two paths: the second is not answered with the first's origin.
    @Test func canonicallyEquivalentTextsAreRememberedApart() {
        let composed = "https://backend.example/r\u{E9}deem"
        let decomposed = "https://backend.example/re\u{301}deem"
        #expect(composed == decomposed, "equal as Swift strings")
        #expect(parsed(composed) != parsed(decomposed), "different as URLs")
        #expect(RedeemURLOrigins.origin(of: composed) == parsed(composed))
        #expect(RedeemURLOrigins.origin(of: decomposed) == parsed(decomposed))
        #expect(RedeemURLOrigins.origin(of: composed) == parsed(composed))
    }

    @Test func refusedTextsStayRefusedAndTheTableStaysBounded() {
        for index in 0..<(RedeemURLOrigins.capacity * 2 + 3) {
            let text = "https://backend.example/\(index)"
            #expect(RedeemURLOrigins.origin(of: text) == parsed(text))
        }
        #expect(RedeemURLOrigins.origin(of: "not a url") == nil)
        #expect(RedeemURLOrigins.origin(of: "https://user@backend.example/x") == nil)
        #expect(RedeemURLOrigins.origin(of: "not a url") == nil)
    }

    /// A text longer than any redeem URL may be (8 KiB) is refused without being parsed or
    /// remembered: an app passing long texts to the pipeline used to fill the table with them.
    @Test func aTextLongerThanARedeemURLIsNeitherParsedNorRemembered() {
        let limit = PendingOutOfBandOperation.RedeemData.maximumRedeemURLBytes
        let prefix = "https://backend.example/\(UUID().uuidString)/"
        let longest = prefix + String(repeating: "a", count: limit - prefix.utf8.count)
        #expect(RedeemURLOrigins.origin(of: longest) == parsed(longest) && parsed(longest) != nil)
        let tooLong = longest + "a"
        #expect(parsed(tooLong) != nil, "a URL all the same")
        // As booleans: a failure message quoting 8 KiB of text would bury the point.
        let refused = RedeemURLOrigins.origin(of: tooLong) == nil
        let remembered = RedeemURLOrigins.isRemembered(tooLong)
        let identityIsInvalid = RedemptionIdentity.origin(ofRedeemURL: tooLong)
            .hasPrefix(RedemptionIdentity.invalidOriginPrefix)
        #expect(refused && !remembered && identityIsInvalid)
    }
}

import Testing

@testable import FetchChannelCLI

/// `redeem --redeem-url`: a backend URL by the same rules, but kept exactly as the backend wrote
/// it, a query included; `--server` stays normalised and without a query.
@Suite struct RedeemURLOptionTests {
    @Test(arguments: [
        "https://Backend.example:443/nevisfido/token/redeem/authentication/?tenant=a",
        "https://backend.example/r/",
        "http://127.0.0.1:8080/r?x=1&y=%2F",
    ])
    func aRedeemURLIsKeptAsGiven(text: String) throws {
        #expect(try BackendURL(parsing: text, option: "redeem-url", asGiven: true).description == text)
    }

    @Test(arguments: [
        "https://user:pw@backend.example/r", "https://backend.example/r#fragment", "http://backend.example/r",
        "https://backend.example/a/../r", "https://backend.example/a/..;/r", "ftp://backend.example/r",
    ])
    func aRedeemURLFollowsTheBackendRules(text: String) {
        #expect(throws: UsageError.self) { try BackendURL(parsing: text, option: "redeem-url", asGiven: true) }
    }

    @Test func aPortTooLargeForAnIntIsNamedAsThePort() {
        let error = #expect(throws: UsageError.self) {
            try BackendURL(parsing: "http://127.0.0.1:99999999999999999999/r", option: "redeem-url", asGiven: true)
        }
        #expect(error?.message.contains("port must be 1 to 65535") == true, "\(String(describing: error))")
    }

    @Test func aServerURLIsStillNormalisedAndHasNoQuery() throws {
        #expect(
            try BackendURL(parsing: "https://Backend.example:443/prefix/").description
                == "https://backend.example/prefix")
        #expect(throws: UsageError.self) { try BackendURL(parsing: "https://backend.example/?x=1") }
    }
}

import Testing

@testable import FetchChannelCLI

/// Backend URLs on the command line: `--server` normalised and without a query; `redeem
/// --redeem-url` by the same rules, but kept exactly as the backend wrote it, a query included;
/// a stored URL shown without its user information, parsable or not.
@Suite struct BackendURLTests {
    @Test(arguments: [
        "https://Backend.example:443/nevisfido/token/redeem/authentication/?tenant=a",
        "https://backend.example/r/",
        "http://127.0.0.1:8080/r?x=1&y=%2F",
    ])
    func aRedeemURLIsKeptAsGiven(text: String) throws {
        #expect(try BackendURL(parsing: text, option: "redeem-url", asGiven: true).description == text)
    }

    @Test(arguments: [
        "https://user:pw@backend.example/r", "https://%E9@backend.example/r", "https://backend.example/r#fragment",
        "http://backend.example/r", "https://backend.example/a/../r", "https://backend.example/a/..;/r",
        "ftp://backend.example/r",
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

    /// An encoded separator is refused however the path ends: trimming a trailing slash from the
    /// decoded path turned `%2F` into a real `/`, and `/a%2Fb/` was stored as `/a/b`.
    @Test(arguments: [
        "https://backend.example/a%2Fb", "https://backend.example/a%2Fb/", "https://backend.example/a%2fb//",
        "https://backend.example/a%5Cb/", "http://127.0.0.1:8080/a%2F/",
    ])
    func anEncodedSeparatorIsRefusedWithOrWithoutATrailingSlash(text: String) {
        #expect(throws: UsageError.self) { try BackendURL(parsing: text) }
    }

    /// A dispatch target id is one path segment of the rotation's URL, by the wire module's rule:
    /// unreserved ASCII stays, everything else is encoded, and so are `.` and `..`, which a URL
    /// resolver would collapse (`..` sent the signed PATCH to the collection's parent).
    @Test(arguments: [
        ("..", "%2E%2E"), (".", "%2E"), ("é", "%C3%A9"), ("/", "%2F"), ("a/../b", "a%2F..%2Fb"),
        ("t-1._~", "t-1._~"),
    ])
    func aDispatchTargetIdIsOnePathSegment(id: String, segment: String) throws {
        let server = try BackendURL(parsing: "https://backend.example/prefix")
        #expect(
            DispatchTargetBody.url(of: id, at: server).absoluteString
                == "https://backend.example/prefix/nevisfido/token/dispatch/targets/" + segment)
    }

    @Test(arguments: [
        ("https://u:s3cret@backend.example/p", "https://backend.example/p"),
        ("https://u:s3cret@ho st/p", "https://ho st/p"),
        ("https://a@b:s3cret@ho st", "https://ho st"),
        ("https://u:p/w@ho st/", "https://ho st/"),
        ("https://backend.example/p@q", "https://backend.example/p@q"),
        ("not a URL", "not a URL"),
    ])
    func aStoredURLIsShownWithoutUserInformation(stored: String, shown: String) {
        #expect(BackendURL.shown(stored) == shown)
    }

    @Test func aRefusedURLIsNamedWithoutItsPassword() {
        let error = #expect(throws: UsageError.self) { try BackendURL(parsing: "https://u:s3cret@ho st/") }
        #expect(error.map { !$0.message.contains("s3cret") } == true, "\(String(describing: error))")
    }
}

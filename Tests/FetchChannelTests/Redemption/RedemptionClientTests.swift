import DeviceSigning
import Foundation
import Testing

@testable import FetchChannel

/// The redemption client's mapping and request over a fake transport.
@Suite struct RedemptionClientTests {
    static let url = "https://backend.example/nevisfido/token/redeem/authentication"

    func outcome(_ status: Int, _ body: String, contentType: String? = "application/json", token: String = "tok")
        -> Result<RedeemedOperation, RedemptionError>
    {
        let headers = contentType.map { ["Content-Type": $0] } ?? [:]
        return RedemptionClient.outcome(
            of: .answer(HTTPAnswer(status: status, headers: headers, body: Data(body.utf8))),
            url: Self.url, token: token)
    }

    @Test func successReadsTheKnownFieldsLeniently() throws {
        let ok = try outcome(
            200,
            #"{"statusCode":1200,"uafRequest":"[{\"op\":\"Auth\"}]","op":"Auth","lifetimeMillis":120000,"extra":true}"#
        ).get()
        #expect(ok.statusCode == 1200)
        #expect(ok.uafRequest == #"[{"op":"Auth"}]"#)
        #expect(ok.op == "Auth")
        #expect(ok.lifetimeMillis == 120_000)
        #expect(ok.body["extra"] == .bool(true))
        let odd = try outcome(200, #"{"statusCode":"1200","op":7}"#).get()
        #expect(odd.statusCode == nil && odd.op == nil && odd.uafRequest == nil && odd.lifetimeMillis == nil)
    }

    @Test func errorCodesDecideWhateverTheErrorStatus() {
        #expect(outcome(410, #"{"errorCode":"TOKEN_ALREADY_REDEEMED"}"#).redemptionCode == "tokenAlreadyRedeemed")
        #expect(outcome(410, #"{"errorCode":"TOKEN_EXPIRED","message":"over"}"#).redemptionCode == "tokenExpired")
        #expect(outcome(409, #"{"errorCode":"TOKEN_ALREADY_REDEEMED"}"#).redemptionCode == "tokenAlreadyRedeemed")
        #expect(outcome(410, "Gone", contentType: "text/plain").redemptionCode == "unknown")
        #expect(outcome(400, #"{"errorCode":"UNKNOWN_TOKEN"}"#).redemptionCode == "unknown")
        #expect(
            outcome(200, #"{"errorCode":"TOKEN_EXPIRED"}"#).redemptionCode == nil,
            "a 2xx is a success whatever its body says")
    }

    /// A success is read whole, up to the transport's 1 MiB; only error bodies stop at 64 KiB.
    @Test func aLargeSuccessIsReadWhole() throws {
        let uafRequest = String(repeating: "u", count: 100 * 1_024)
        let ok = try outcome(200, #"{"statusCode":1200,"uafRequest":"\#(uafRequest)"}"#).get()
        #expect(ok.uafRequest == uafRequest)
        let padding = String(repeating: " ", count: 100 * 1_024)
        let largeError = outcome(410, #"{"errorCode":"TOKEN_EXPIRED"}"# + padding)
        #expect(largeError.redemptionCode == "unknown", "an error body over 64 KiB is not parsed")
    }

    @Test func unusableSuccessAnswersAreUnknown() {
        #expect(outcome(200, "<html>", contentType: "text/html").redemptionCode == "unknown")
        #expect(outcome(200, "[1,2]").redemptionCode == "unknown")
        #expect(outcome(200, #"{"statusCode":1200}"#, contentType: nil).redemptionCode == "unknown")
        let cut = RedemptionClient.outcome(
            of: .answer(
                HTTPAnswer(
                    status: 200, headers: ["Content-Type": "application/json"],
                    body: Data("{}".utf8), bodyWasCutOff: true)), url: Self.url, token: "t")
        #expect(cut.redemptionCode == "unknown")
        #expect(RedemptionClient.outcome(of: .notHTTP("x"), url: Self.url, token: "t").redemptionCode == "unknown")
        let network = RedemptionClient.outcome(
            of: .failure(NetworkFailure(.connectionRefused, detail: "")), url: Self.url, token: "t")
        #expect(network.redemptionCode == "networkError")
    }

    @Test func theTokenNeverAppearsInAnExcerpt() {
        let token = "secret-token-0123456789"
        let result = outcome(500, #"{"error":"bad token secret-token-0123456789"}"#, token: token)
        guard case .failure(let error) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == "unknown")
        #expect(error.httpError?.bodyExcerpt == #"{"error":"bad token [redacted]"}"#)
    }

    /// A backend or proxy that echoes the request's JSON echoes the token escaped (`/` as `\/`);
    /// a duplicate member named with the token is quoted in the reason. Neither shows it.
    @Test func theTokenNeverAppearsEscapedOrInAReason() {
        let token = "ab/cd\"efghijklmnopq"
        let echoed = #"{"echo":{"token":"ab\/cd\"efghijklmnopq"},"again":"ab/cd\"efghijklmnopq"}"#
        let result = outcome(400, echoed, token: token)
        let excerpt = result.failure?.httpError?.bodyExcerpt ?? ""
        #expect(!excerpt.contains("efghijklmnopq"), "\(excerpt)")
        #expect(excerpt.contains(HTTPErrorInfo.redactionMarker))
        let named = "ab/cdefghijklmnopq"
        let duplicate = outcome(200, #"{"\#(named)":1,"\#(named)":2}"#, token: named)
        let message = duplicate.failure?.message ?? ""
        #expect(message.contains("duplicate member") && !message.contains("efghijklmnopq"), "\(message)")
    }

    /// A password in a redeem URL is never sent (the URL is refused) and never shown: not in the
    /// error, not in the operation's identity.
    @Test func aPasswordInARedeemURLIsNotShown() async {
        let transport = FakeTransport { _ in .answer(HTTPAnswer(status: 200)) }
        let withPassword = PendingOutOfBandOperation.RedeemData(
            token: "t", redeemUrl: "https://alice:s3cret@backend.example/nevisfido/token/redeem/x")
        for registered in [nil, [URL(string: "https://backend.example/")!]] {
            let client = RedemptionClient(
                requestTimeout: .seconds(15), transport: transport, timer: NeverTimer(), registeredBackends: registered)
            let failure = await client.redeem(withPassword).failure
            #expect(failure != nil)
            #expect(!"\(failure.map { "\($0) \($0.message) \($0.url)" } ?? "")".contains("s3cret"))
        }
        #expect(!withPassword.identity.description.contains("s3cret"))
        #expect(transport.requests.isEmpty)
    }

    @Test func postsTheTokenAsJSONToTheRedeemURL() async throws {
        let transport = FakeTransport { _ in
            .answer(
                HTTPAnswer(
                    status: 200, headers: ["Content-Type": "application/json"], body: Data(#"{"statusCode":1200}"#.utf8)
                ))
        }
        let client = RedemptionClient(requestTimeout: .seconds(15), transport: transport, timer: NeverTimer())
        let payload = PendingOutOfBandOperation.Payload(
            contentType: "c", version: "1",
            redeemData: .init(token: #"to"k\en"#, redeemUrl: Self.url))
        let redeemed = try await client.redeem(payload).get()
        #expect(redeemed.statusCode == 1200)
        let request = try #require(transport.requests.first)
        #expect(transport.requests.count == 1)
        #expect(request.method == "POST")
        #expect(request.url.absoluteString == Self.url)
        #expect(request.headers["Content-Type"] == "application/json")
        let sent = try JSONDecoder().decode([String: String].self, from: try #require(request.body))
        #expect(sent == ["token": #"to"k\en"#])
    }

    @Test func insecureOrBrokenRedeemURLsAreRefusedWithoutARequest() async {
        let transport = FakeTransport { _ in .answer(HTTPAnswer(status: 200)) }
        let client = RedemptionClient(requestTimeout: .seconds(15), transport: transport, timer: NeverTimer())
        let insecure = await client.redeem(
            PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: "http://backend.example/redeem"))
        let broken = await client.redeem(PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: "not a url"))
        let relative = await client.redeem(
            PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: "/nevisfido/token/redeem/x"))
        #expect(insecure.redemptionCode == "networkError")
        #expect(broken.redemptionCode == "networkError")
        #expect(relative.redemptionCode == "networkError")
        #expect(transport.requests.isEmpty)
    }

    /// A token or redeem URL out of bounds (from a push, link or QR code: a fetched one is refused
    /// by the decoder) is refused before any request: it would only grow the redeemed-token file
    /// and the work of redacting the answer.
    @Test func anEmptyOrOversizedTokenOrURLIsRefusedWithoutARequest() async {
        let transport = FakeTransport { _ in .answer(HTTPAnswer(status: 200)) }
        let client = RedemptionClient(requestTimeout: .seconds(15), transport: transport, timer: NeverTimer())
        typealias RedeemData = PendingOutOfBandOperation.RedeemData
        let longToken = String(repeating: "t", count: RedeemData.maximumTokenBytes + 1)
        let longURL = Self.url + "/" + String(repeating: "u", count: RedeemData.maximumRedeemURLBytes)
        for (data, words) in [
            (RedeemData(token: "", redeemUrl: Self.url), "token is empty"),
            (RedeemData(token: longToken, redeemUrl: Self.url), "token is longer than 1024 bytes"),
            (RedeemData(token: "t", redeemUrl: longURL), "redeemUrl is longer than 8192 bytes"),
        ] {
            let result = await client.redeem(data)
            #expect(result.redemptionCode == "unknown")
            guard case .failure(let error) = result else { continue }
            #expect(error.message.contains(words), "\(error.message)")
        }
        #expect(transport.requests.isEmpty)
        let atTheLimit = String(repeating: "t", count: RedeemData.maximumTokenBytes)
        _ = await client.redeem(RedeemData(token: atTheLimit, redeemUrl: Self.url))
        #expect(transport.requests.count == 1, "a token of exactly the limit is sent")
    }

    /// An error code given twice is not an answer to act on: which one a lenient parser keeps is
    /// its choice, and one of them says "already redeemed".
    @Test func anAnswerWithARepeatedMemberIsNotJSON() {
        let repeated = #"{"errorCode":"TOKEN_EXPIRED","errorCode":"TOKEN_ALREADY_REDEEMED"}"#
        #expect(outcome(410, repeated).redemptionCode == "unknown")
        #expect(outcome(200, #"{"op":"Auth","op":"Reg"}"#).redemptionCode == "unknown")
    }

    @Test(arguments: [
        "https://evil.example/prefix/redeem", "https://backend.example:8443/prefix/redeem",
        "http://backend.example/prefix/redeem",
        "https://backend.example/prefixevil/redeem", "https://backend.example/prefix/../redeem",
        "https://backend.example/prefix/%2e%2e/redeem", "https://user@backend.example/prefix/redeem",
        "http://127.0.0.1:9/redeem", "http://127.0.0.1:8080/redeem/../../x",
    ])
    func aRedeemURLOutsideTheRegisteredBackendsIsRefusedWithoutARequest(redeemUrl: String) async throws {
        let transport = FakeTransport { _ in .answer(HTTPAnswer(status: 200)) }
        let registered = ["https://backend.example/prefix", "http://127.0.0.1:8080"].compactMap(URL.init(string:))
        let client = RedemptionClient(
            requestTimeout: .seconds(15), transport: transport, timer: NeverTimer(),
            registeredBackends: registered)
        let result = await client.redeem(PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: redeemUrl))
        guard case .failure(.networkError(let url, let cause)) = result else {
            Issue.record("expected networkError, got \(result)")
            return
        }
        #expect(url == URLUserInformation.masked(redeemUrl), "user information is never shown")
        #expect(cause.kind == .foreignRedeemUrl)
        #expect(cause.detail.contains("https://backend.example:443/prefix, http://127.0.0.1:8080"), "\(cause.detail)")
        #expect(try #require(result.failure).message.contains("not on a backend this device is registered with"))
        #expect(transport.requests.isEmpty)
    }

    /// A repeated member is the reason only for an answer that says it is JSON: in any other, the
    /// body is not the operation at all.
    @Test func aDuplicateMemberIsTheReasonOnlyForAJSONAnswer() async throws {
        let body = Data(#"{"op":"Auth","op":"Reg"}"#.utf8)
        for (contentType, reason) in [
            ("application/json", "has a duplicate member"), ("text/plain", "The answer is not a JSON object."),
        ] {
            let transport = FakeTransport { _ in
                .answer(HTTPAnswer(status: 200, headers: ["Content-Type": contentType], body: body))
            }
            let client = RedemptionClient(requestTimeout: .seconds(15), transport: transport, timer: NeverTimer())
            let result = await client.redeem(
                PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: "https://b.example/r"))
            let message = try #require(result.failure).message
            #expect(message.contains(reason), "\(contentType): \(message)")
        }
    }

    @Test func aRedeemURLOnARegisteredBackendIsSentAndNoRestrictionIsTheDefault() async {
        let transport = FakeTransport { _ in
            .answer(HTTPAnswer(status: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8)))
        }
        let registered = RedemptionClient(
            requestTimeout: .seconds(15), transport: transport, timer: NeverTimer(),
            registeredBackends: [URL(string: "https://backend.example/prefix/")!])
        let inside = PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: "https://BACKEND.example:443/prefix/r")
        #expect(await registered.redeem(inside).redemptionCode == nil)
        let unrestricted = RedemptionClient(requestTimeout: .seconds(15), transport: transport, timer: NeverTimer())
        #expect(unrestricted.registeredBackends == nil)
        let anywhere = PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: "https://anywhere.example/r")
        #expect(await unrestricted.redeem(anywhere).redemptionCode == nil)
        // Unrestricted, a URL without a usable origin is still never sent: its identity would not
        // match the origin it reaches.
        for redeemUrl in ["https://anywhere.example/x/../r", "https://user@anywhere.example/r"] {
            let noOrigin = PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: redeemUrl)
            #expect(await unrestricted.redeem(noOrigin).failure?.networkFailureKind == .invalidURL, "\(redeemUrl)")
        }
        let none = RedemptionClient(
            requestTimeout: .seconds(15), transport: transport, timer: NeverTimer(),
            registeredBackends: [])
        #expect(await none.redeem(inside).failure?.networkFailureKind == .foreignRedeemUrl)
        #expect(transport.requests.count == 2, "the registered and the unrestricted redemption")
    }

    /// A transport whose every redemption succeeds (`{}`).
    static func acceptingTransport() -> FakeTransport {
        FakeTransport { _ in
            .answer(HTTPAnswer(status: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8)))
        }
    }

    /// A registration at `server` with `trust` (the key and ids do not matter to redemption).
    static func registration(_ server: String, _ trust: TLSTrust, key: P256.Signing.PrivateKey) -> FetchRegistration {
        FetchRegistration(server: URL(string: server)!, deviceId: "d", dispatchTargetId: "t", key: key, trust: trust)
    }

    @Test func eachRegisteredBackendIsRedeemedWithItsOwnTrust() async throws {
        let transport = Self.acceptingTransport()
        let key = try P256.Signing.PrivateKey()
        func registration(_ server: String, _ trust: TLSTrust) -> FetchRegistration {
            Self.registration(server, trust, key: key)
        }
        let pinned = try TLSTrust(pins: ["sha256//" + Data(count: 32).base64EncodedString()])
        let privateCA = try TLSTrust.caFile("/etc/fetchchannel/backend-ca.pem")
        let client = RedemptionClient(
            requestTimeout: .seconds(15), transport: transport, timer: NeverTimer(),
            registrations: [
                registration("https://a.example/", pinned),
                registration("https://a.example/nested", .system),
                registration("https://b.example/prefix", privateCA),
            ])
        // The backend whose base path holds the URL most closely decides, a system-trust one included.
        let expected: [(String, TLSTrust)] = [
            ("https://a.example/redeem", pinned),
            ("https://a.example/nested/r", .system),
            ("https://B.example:443/prefix/r", privateCA),
        ]
        for (url, _) in expected {
            #expect(
                await client.redeem(PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: url))
                    .redemptionCode == nil)
        }
        #expect(transport.requests.map(\.trust) == expected.map(\.1))
        #expect(try client.trust(forRedeemURL: URL(string: "https://elsewhere.example/r")!).get() == .system)
        let outside = PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: "https://b.example/other/r")
        #expect(await client.redeem(outside).failure?.networkFailureKind == .foreignRedeemUrl)
    }

    /// Two registrations of one backend with different trust (one pinned, one not): which one the
    /// operation came from cannot be told, so nothing is sent; it used to go out under whichever
    /// was listed first, the unpinned one here. The same pins in another order are one trust.
    @Test func registrationsOfOneBackendThatDisagreeOnItsTrustSendNothing() async throws {
        let transport = Self.acceptingTransport()
        let key = try P256.Signing.PrivateKey()
        func registration(_ server: String, _ trust: TLSTrust) -> FetchRegistration {
            Self.registration(server, trust, key: key)
        }
        let (pinA, pinB) = ("sha256//" + Data(count: 32).base64EncodedString(), TLSTrustTests.goodPin)
        let redeemData = PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: "https://a.example/r")
        let disagreeing = RedemptionClient(
            requestTimeout: .seconds(15), transport: transport, timer: NeverTimer(),
            registrations: [
                registration("https://a.example/", .system),
                registration("https://a.example", try TLSTrust(pins: [pinA])),
            ])
        let refused = try #require(await disagreeing.redeem(redeemData).failure)
        #expect(refused.networkFailureKind == .other)
        #expect(refused.message.contains("different TLS trust"), "\(refused.message)")
        #expect(transport.requests.isEmpty)
        let agreeing = RedemptionClient(
            requestTimeout: .seconds(15), transport: transport, timer: NeverTimer(),
            registrations: [
                registration("https://a.example/", try TLSTrust(pins: [pinA, pinB])),
                registration("https://a.example", try TLSTrust(pins: [pinB, pinA])),
            ])
        #expect(await agreeing.redeem(redeemData).redemptionCode == nil)
        #expect(transport.requests.count == 1)
    }

    @Test func timeoutIsANetworkError() async {
        let gate = Gate()
        let transport = FakeTransport { _ in
            _ = await gate.park("never")
            return .failure(NetworkFailure(.cancelled, detail: ""))
        }
        let client = RedemptionClient(requestTimeout: .seconds(15), transport: transport, timer: ImmediateTimer())
        let result = await client.redeem(PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: Self.url))
        guard case .failure(.networkError(_, let cause)) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(cause.kind == .timedOut)
    }
}

extension Result where Failure == RedemptionError {
    var redemptionCode: String? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}

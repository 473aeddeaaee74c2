import DeviceSigning
import Foundation
import Testing

@testable import FetchChannel

/// A backend's operations must redeem on that backend: the others are dropped with one
/// `invalidResponse`, and nothing else changes.
extension FetchClientTests {
    static let prefixed = "https://a.example/prefix"

    static func operation(_ token: String, redeemUrl: String, time: Int64 = 1) -> String {
        #"{"creationTimeInEpochMillis":\#(time),"dispatchChannel":"link","payload":{"contentType":"application/json","#
            + #""version":"1","redeemData":{"token":"\#(token)","redeemUrl":"\#(redeemUrl)"}}}"#
    }

    /// Backend a (`/prefix`) answers its own operation `a-own` and `foreign`; backend b answers `b-own`.
    func fetchWithForeign(_ foreign: [String]) async -> (PendingOutOfBandOperationsResult, FakeTransport) {
        let transport = FakeTransport { request in
            switch request.url.host {
            case "a.example":
                let own = Self.operation("a-own", redeemUrl: Self.prefixed + "/nevisfido/token/redeem/authentication")
                let others = foreign.enumerated().map {
                    Self.operation("foreign-\($0.offset)", redeemUrl: $0.element, time: 2)
                }
                return Self.ok([own] + others)
            default:
                return Self.ok([Self.operation("b-own", redeemUrl: "https://b.example/nevisfido/token/redeem")])
            }
        }
        let result = await client(transport).pendingOutOfBandOperations([
            registration(Self.prefixed),
            registration("https://b.example"),
        ])
        return (result, transport)
    }

    @Test(arguments: [
        ("https://evil.example/prefix/redeem", "https://evil.example:443/prefix/redeem"),  // another host
        ("https://a.example:8443/prefix/redeem", "https://a.example:8443/prefix/redeem"),  // another port
        ("http://a.example/prefix/redeem", "http://a.example:80/prefix/redeem"),  // another scheme
        ("https://a.example/other/redeem", "https://a.example:443/other/redeem"),  // outside the base path
        ("https://a.example/prefixevil/redeem", "https://a.example:443/prefixevil/redeem"),
        ("https://a.example/prefix/../other", "an unusable URL 'https://a.example/prefix/../other'"),
        ("https://a.example/prefix/%2e%2e/other", "an unusable URL 'https://a.example/prefix/%2e%2e/other'"),
        ("https://user@a.example/prefix/redeem", "an unusable URL 'https://***@a.example/prefix/redeem'"),
        ("https://user:secret@a.example/x", "an unusable URL 'https://***@a.example/x'"),
        ("not a url", "an unusable URL 'not a url'"),
    ])
    func anOperationRedeemingElsewhereIsDroppedAndReported(foreign: String, named: String) async throws {
        let (result, _) = await fetchWithForeign([foreign])
        #expect(result.operations.map(\.token) == ["a-own", "b-own"], "the sibling and the other backend's are kept")
        let error = try #require(result.errors.first)
        #expect(result.errors.count == 1)
        #expect(error.code == "invalidResponse")
        #expect(error.server == Self.prefixed)
        #expect(error.invalidResponse?.kind == .foreignRedeemUrl)
        guard let reason = error.invalidResponse?.reason else { return }
        #expect(reason.contains("1 operation was dropped"), "\(reason)")
        #expect(reason.contains("this backend (https://a.example:443/prefix)"), "\(reason)")
        #expect(reason.contains(named), "\(reason)")
    }

    /// Two redeem URLs that are one string to Swift (canonically equivalent: é precomposed, and
    /// e with a combining accent) are two URLs, one inside the base path and one outside: each is
    /// judged on its own bytes. Before, the second took the first one's verdict.
    /// A redeem URL without a usable origin is quoted fit for one line: no line feed, escape or
    /// bidirectional control (a backend could otherwise write lines of its own, naming another
    /// backend, into a log or terminal), at most 100 scalars however they combine.
    @Test func anUnusableRedeemURLIsQuotedWithoutControlCharacters() throws {
        let hostile =
            "\nerror: unauthorized from https://bank.example \u{1B}[31m\u{202E}" + "e"
            + String(repeating: "\u{301}", count: 5_000)
        let forged = PendingOutOfBandOperation(
            creationTimeInEpochMillis: 1, dispatchChannel: .link,
            payload: .init(
                contentType: "application/json", version: "1", redeemData: .init(token: "t", redeemUrl: hostile)),
            server: Self.prefixed)
        let (_, error) = RedeemOriginCheck.admitted(
            [forged], origin: BackendOrigin(url: URL(string: Self.prefixed)!), server: Self.prefixed)
        let message = try #require(error).message
        #expect(!message.unicodeScalars.contains { [.control, .format].contains($0.properties.generalCategory) })
        #expect(message.contains("?error: unauthorized"), "\(message)")
        #expect(message.utf8.count < 600, "\(message.utf8.count) bytes")
    }

    /// The reason names each distinct place once and counts the others, however many operations
    /// share them. (The de-duplication is now a set, linear in the operations; that is not timed here.)
    @Test func theReasonNamesDistinctPlacesOnce() {
        let places = (0..<20_000).map { "an unusable URL 'e\u{301}\($0 % 5)'" }
        let reason = RedeemOriginCheck.reason(dropped: places, backend: nil)
        #expect(reason.hasPrefix("20000 operations were dropped"), "\(reason)")
        #expect(reason.contains("and 2 more"), "\(reason)")
    }

    @Test func redeemURLsAreJudgedByTheirBytesNotAsEqualStrings() async throws {
        let composed = "https://a.example/caf\u{E9}/redeem"
        let decomposed = "https://a.example/cafe\u{301}/redeem"
        #expect(composed == decomposed, "equal as Swift strings")
        let answer =
            #"{"operations":["# + Self.operation("inside", redeemUrl: composed) + ","
            + Self.operation("outside", redeemUrl: decomposed, time: 2) + "]}"
        let operations = try PendingOperationsDecoder.decode(Data(answer.utf8), server: "a")
        let origin = try #require(URL(string: "https://a.example/caf%C3%A9").flatMap(BackendOrigin.init(url:)))
        let (admitted, error) = RedeemOriginCheck.admitted(operations, origin: origin, server: "a")
        #expect(admitted.map(\.token) == ["inside"])
        #expect(error?.invalidResponse?.kind == .foreignRedeemUrl)
    }

    @Test func oneErrorCountsEveryDroppedOperation() async throws {
        let foreign = [
            "https://evil.example/r", "https://evil.example/r", "https://a.example/x", "https://c.example/r",
            "https://d.example/r",
        ]
        let (result, _) = await fetchWithForeign(foreign)
        #expect(result.operations.map(\.token) == ["a-own", "b-own"])
        guard let cause = result.errors.first?.invalidResponse, result.errors.count == 1 else {
            Issue.record("expected one invalidResponse, got \(result.errors)")
            return
        }
        #expect(cause.kind == .foreignRedeemUrl)
        let reason = cause.reason
        #expect(reason.contains("5 operations were dropped"), "\(reason)")
        let named = "https://evil.example:443/r, https://a.example:443/x, https://c.example:443/r and 1 more"
        #expect(reason.contains(named), "\(reason)")
    }

    @Test func aDroppedOperationIsNeverRedeemed() async throws {
        // The foreign operation is the latest, so it is the one a coordinator would start.
        let transport = FakeTransport { request in
            guard request.method == "GET" else {
                return .answer(
                    HTTPAnswer(
                        status: 200, headers: ["Content-Type": "application/json"],
                        body: Data("{}".utf8)))
            }
            return Self.ok([
                Self.operation("own", redeemUrl: "https://a.example/redeem", time: 1),
                Self.operation("foreign", redeemUrl: "https://evil.example/redeem", time: 9),
            ])
        }
        let fetcher = RegisteredFetchClient(
            client: client(transport),
            registrations: [registration("https://a.example")])
        let redemption = RedemptionClient(requestTimeout: .seconds(15), transport: transport, timer: NeverTimer())
        let coordinator = FetchCoordinator(
            fetcher: fetcher, pipeline: RedemptionPipeline(redeemer: redemption),
            policy: .accessibility, clock: clock)
        let snapshot = try #require(await coordinator.handle(.userAction).snapshot)
        #expect(snapshot.operations.map(\.token) == ["own"])
        #expect(snapshot.errors.map(\.code) == ["invalidResponse"])
        #expect(snapshot.started?.code == "redeemed" && snapshot.started?.token == "own")
        #expect(transport.requests(toHost: "evil.example").isEmpty)
    }
}

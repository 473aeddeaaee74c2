import FetchChannel
import Foundation
import Testing

/// ``BackendOrigin``: how a backend URL is normalised, and which URLs are inside it.
@Suite struct BackendOriginTests {
    static func origin(_ text: String) throws -> BackendOrigin {
        let url = try #require(URL(string: text))
        return try #require(BackendOrigin(url: url), "\(text)")
    }

    static func contains(_ base: String, _ candidate: String) throws -> Bool {
        let url = try #require(URL(string: candidate), "\(candidate)")
        return try origin(base).contains(url)
    }

    @Test func partsAreNormalisedAndDefaultPortsFilledIn() throws {
        let https = try Self.origin("HTTPS://Backend.Example/Prefix/")
        #expect(https.scheme == "https" && https.host == "backend.example" && https.port == 443)
        #expect(https.basePath == "/Prefix", "the path keeps its case and loses the trailing slash")
        #expect(https.origin == "https://backend.example:443")
        #expect(https.description == "https://backend.example:443/Prefix")
        let http = try Self.origin("http://127.0.0.1")
        #expect(http.port == 80 && http.basePath == "" && http.origin == "http://127.0.0.1:80")
        let v6 = try Self.origin("http://[::1]:8080/x")
        #expect(v6.host == "::1" && v6.port == 8080 && v6.origin == "http://[::1]:8080")
        #expect(try Self.origin("https://backend.example:443") == Self.origin("https://backend.example/"))
    }

    @Test(arguments: [
        "ftp://backend.example/x", "file:///tmp/x", "https://user@backend.example/x",
        "https://user:secret@backend.example/x", "https://backend.example/a/../b", "https://backend.example/a/./b",
        "https://backend.example/a/%2e%2e/b", "https://backend.example/a/%2E%2e/b", "https://backend.example/a/%2e/b",
        "https://backend.example/..", "https://backend.example/a%2Fb", "https://backend.example/a%5Cb", "https:/x",
        // Path parameters after a dot segment: Java servlet containers resolve `..;x` as `..`.
        "https://backend.example/a/..;/b", "https://backend.example/a/..;x=1/b", "https://backend.example/a/.;/b",
        "https://backend.example/a/%2e%2e;/b", "https://backend.example/a/..%3B/b",
        // A port too large for an Int: read as none, it would have been the default port.
        "https://backend.example:18446744073709552059/x", "https://backend.example:99999999999999999999/x",
    ])
    func urlsThatCouldLeaveTheirPathOrNameNoHostHaveNoOrigin(text: String) throws {
        let url = try #require(URL(string: text))
        #expect(BackendOrigin(url: url) == nil)
    }

    @Test(arguments: [
        "https://backend.example/prefix", "https://backend.example/prefix/",
        "https://backend.example/prefix/nevisfido/token/redeem/authentication",
        "HTTPS://BACKEND.EXAMPLE:443/prefix/redeem", "https://backend.example/prefix/redeem?x=/../y#z",
        "https://backend.example/prefix/a..b/.well-known", "https://backend.example/prefix/...;x/a;b",
    ])
    func urlsUnderTheBasePathAreInside(candidate: String) throws {
        #expect(try Self.contains("https://backend.example/prefix", candidate))
    }

    @Test(arguments: [
        "https://backend.example/prefixevil", "https://backend.example/prefixevil/redeem", "https://backend.example/",
        "https://backend.example", "https://backend.example/other/redeem", "https://backend.example/Prefix/redeem",
        "https://backend.example/prefix/../other", "https://backend.example/prefix/%2e%2e/other",
        "https://backend.example/prefix/%2E%2E/other", "https://backend.example/prefix/./redeem",
        "https://backend.example/prefix%2Fredeem", "https://backend.example/prefix/a%2F..%2F..%2Fother",
        "https://user@backend.example/prefix/redeem", "http://backend.example/prefix/redeem",
        "https://backend.example:8443/prefix/redeem", "https://other.example/prefix/redeem",
        "https://backend.example.evil.example/prefix/redeem", "https://backend.example./prefix/redeem",
    ])
    func urlsElsewhereOrClimbingOutAreNot(candidate: String) throws {
        #expect(try !Self.contains("https://backend.example/prefix", candidate))
    }

    @Test func aRootBaseAdmitsEveryPathOnItsOriginOnly() throws {
        #expect(try Self.contains("https://backend.example/", "https://backend.example"))
        #expect(try Self.contains("https://backend.example", "https://backend.example/any/path"))
        #expect(
            try Self.contains("http://[::1]:8080", "http://[0:0:0:0:0:0:0:1]:8080/x") == false,
            "IPv6 spellings are compared as written: refusing errs on the safe side")
        #expect(try !Self.contains("https://backend.example", "https://backend.example:444/x"))
        #expect(try !Self.contains("https://backend.example", "https://backend.example/../x"))
    }

    @Test func aRedeemURLWithoutAnOriginIsAnIdentityOfItsOwn() {
        let good = PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: "https://Backend.example:443/x/redeem")
        #expect(good.identity == RedemptionIdentity(origin: "https://backend.example:443", token: "t"))
        let bad = PendingOutOfBandOperation.RedeemData(token: "t", redeemUrl: "https://backend.example/../x")
        #expect(bad.identity.origin == RedemptionIdentity.invalidOriginPrefix + "https://backend.example/../x")
        #expect(bad.identity != good.identity)
    }
}

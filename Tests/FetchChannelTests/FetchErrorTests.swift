import DeviceSigning
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannel

/// The error types themselves: codes, servers, messages, excerpts.
@Suite struct FetchErrorTests {
    static let server = "https://backend.example"
    static let info = HTTPErrorInfo(status: 401, bodyExcerpt: "{}")

    static let everyCase: [(PendingOutOfBandOperationsError, String)] = [
        (
            .clockSkewTooBig(server: server, measuredOffsetMillis: 600_000, toleranceMillis: 60_000, httpError: info),
            "clockSkewTooBig"
        ),
        (.networkError(server: server, cause: NetworkFailure(.connectionRefused, detail: "refused")), "networkError"),
        (
            .operationNotSupportedByBackend(server: server, httpError: HTTPErrorInfo(status: 404, bodyExcerpt: "")),
            "operationNotSupportedByBackend"
        ),
        (.unauthorized(server: server, httpError: info), "unauthorized"),
        (
            .invalidResponse(server: server, cause: InvalidResponse(.malformed, reason: "The answer is not JSON.")),
            "invalidResponse"
        ),
        (.serverError(server: server, httpError: HTTPErrorInfo(status: 503, bodyExcerpt: "")), "serverError"),
        (.deviceProtectionError(server: server, reason: "The key file is corrupt."), "deviceProtectionError"),
        (.unknown(server: server, httpError: HTTPErrorInfo(status: 429, bodyExcerpt: "")), "unknown"),
    ]

    @Test func everyCaseHasItsNameAsCodeAndNamesItsServer() {
        for (error, name) in Self.everyCase {
            #expect(error.code == name)
            #expect(error.server == Self.server, "\(name)")
            #expect(error.message.contains(Self.server), "\(name): \(error.message)")
            #expect(error.description == "\(name): \(error.message)")
        }
        #expect(Set(Self.everyCase.map(\.1)).count == 8)
    }

    @Test func clockSkewUsesTheSharedMessageAndExposesItsNumbers() {
        let error = PendingOutOfBandOperationsError.clockSkewTooBig(
            server: Self.server, measuredOffsetMillis: -432_000,
            toleranceMillis: 60_000, httpError: Self.info)
        #expect(error.measuredOffsetMillis == -432_000)
        #expect(error.toleranceMillis == 60_000)
        #expect(
            error.message
                == ClockSkew(server: Self.server, measuredOffsetMillis: -432_000, toleranceMillis: 60_000).message)
        #expect(error.message.contains("7 min 12 s ahead of"))
        #expect(error.httpError == Self.info)
        #expect(
            PendingOutOfBandOperationsError.unauthorized(server: Self.server, httpError: Self.info).measuredOffsetMillis
                == nil)
    }

    @Test func networkMessagesSayWhatToDo() {
        for kind in NetworkFailure.Kind.allCases {
            let error = PendingOutOfBandOperationsError.networkError(
                server: Self.server, cause: NetworkFailure(kind, detail: "detail"))
            #expect(error.networkFailure?.kind == kind)
            #expect(error.httpError == nil)
            #expect(error.message.count > 30, "\(kind)")
        }
        let insecure = PendingOutOfBandOperationsError.networkError(
            server: "http://backend.example", cause: NetworkFailure(.insecureTransport, detail: ""))
        #expect(insecure.message.contains("https://"))
    }

    /// The causes follow the package's one error style: a stable code, `code: reason` as text, and
    /// equality on the code alone (docs/ARCHITECTURE.md, "Errors").
    @Test func causesCompareByCodeAndDescribeThemselves() {
        let refused = NetworkFailure(.connectionRefused, detail: "ECONNREFUSED")
        #expect(refused == NetworkFailure(.connectionRefused, detail: "another text"))
        #expect(refused != NetworkFailure(.timedOut, detail: "ECONNREFUSED"))
        #expect(refused.description == "connectionRefused: ECONNREFUSED")
        #expect(NetworkFailure(.cancelled, detail: "").description == "cancelled")
        #expect(refused.kind == refused.code && refused.reason == refused.detail)
        let malformed = InvalidResponse(.malformed, reason: "Not JSON.")
        #expect(malformed == InvalidResponse(.malformed, reason: "Truncated."))
        #expect(malformed.description == "malformed: Not JSON.")
        #expect(Set(NetworkFailure.Code.allCases.map(\.rawValue)).count == NetworkFailure.Code.allCases.count)
        #expect(InvalidResponse.Code.allCases.contains(.undecryptable))
    }

    @Test func unknownWithoutServerOrAnswer() {
        let error = PendingOutOfBandOperationsError.unknown(server: nil, httpError: nil)
        #expect(error.server == nil)
        #expect(error.code == "unknown")
        #expect(!error.message.isEmpty)
    }

    /// A 429 (the backend's replay quota, or a proxy's rate limit) says to fetch less often, not
    /// to check the server URL.
    @Test func tooManyRequestsSaysToFetchLessOften() {
        let limited = PendingOutOfBandOperationsError.unknown(
            server: "https://backend.example", httpError: HTTPErrorInfo(status: 429, bodyExcerpt: ""))
        #expect(limited.code == "unknown")
        #expect(limited.message.contains("Fetch less often") && !limited.message.contains("server URL"))
        let other = PendingOutOfBandOperationsError.unknown(
            server: "https://backend.example", httpError: HTTPErrorInfo(status: 418, bodyExcerpt: ""))
        #expect(other.message.contains("server URL"))
    }

    // MARK: HTTPErrorInfo

    @Test func excerptIsCutAtOneKibibyteOnAScalarBoundary() {
        // 1022 ASCII bytes, then "€" (3 bytes: would end at 1025), then more.
        let body = String(repeating: "x", count: 1_022) + "€" + String(repeating: "y", count: 100)
        let info = HTTPErrorInfo(status: 500, body: Array(body.utf8))
        #expect(info.bodyExcerpt == String(repeating: "x", count: 1_022))
        #expect(info.bodyByteCount == 1_022 + 3 + 100)
        #expect(info.isTruncated)
        let exact = HTTPErrorInfo(status: 500, body: Array(String(repeating: "z", count: 1_024).utf8))
        #expect(exact.bodyExcerpt.utf8.count == 1_024)
        #expect(!exact.isTruncated)
    }

    /// A short body whose echoed secret was redacted is whole in the excerpt: no "…". It was
    /// judged against the body's size before redaction, and looked cut.
    @Test func aRedactedShortBodyIsNotTruncated() {
        let secret = String(repeating: "s", count: 80)
        let info = HTTPErrorInfo(status: 500, body: Array("sig=\(secret)".utf8), redacting: [secret])
        #expect(info.bodyExcerpt == "sig=[redacted]")
        #expect(!info.isTruncated && info.description == "HTTP 500: sig=[redacted]")
        let long = HTTPErrorInfo(
            status: 500, body: Array((secret + String(repeating: "x", count: 2_000)).utf8), redacting: [secret])
        #expect(long.isTruncated)
    }

    @Test func invalidUTF8BecomesReplacementCharacters() {
        let info = HTTPErrorInfo(status: 502, body: [0x61, 0xFF, 0x62, 0xC3])
        #expect(info.bodyExcerpt == "a\u{FFFD}b\u{FFFD}")
    }

    @Test func theSignatureIsRedactedWhereverItIsEchoed() throws {
        let signature = "aGVhZGVy.cGF5bG9hZA.c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmU"
        // Echoed whole at the very end of 2 KiB, echoed as its signature part early on.
        let body = "sig c2lnbmF0dXJlLXNpZ25hdHVyZS1zaWduYXR1cmU; " + String(repeating: ".", count: 2_000) + signature
        let info = HTTPErrorInfo(status: 401, body: Array(body.utf8), redacting: [signature])
        #expect(info.bodyExcerpt.hasPrefix("sig [redacted]; "))
        #expect(!info.bodyExcerpt.contains("c2lnbmF0dXJl"))
        // Many echoes: after redaction the later ones move into the first KiB and are redacted too.
        let many = String(repeating: signature + " ", count: 40)
        let repeated = HTTPErrorInfo(status: 401, body: Array(many.utf8), redacting: [signature])
        #expect(!repeated.bodyExcerpt.contains("c2lnbmF0dXJl"))
        #expect(repeated.bodyExcerpt.hasPrefix("[redacted] [redacted] "))
    }

    /// The backend chooses both the body and a redeem token: a pair built to make a naive search
    /// slow (a MiB of `a`, a token of `a`s ending in `b`) is redacted in linear time. Searched as
    /// a String, this pair took minutes.
    @Test(.timeLimit(.minutes(1))) func redactingAHostileBodyTakesLinearTime() {
        let body = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20)
        let token = String(repeating: "a", count: 4_095) + "b"
        let info = HTTPErrorInfo(status: 410, body: body, redacting: [token])
        #expect(info.bodyExcerpt == String(repeating: "a", count: 1_024))
        #expect(info.bodyByteCount == 1 << 20)
    }

    @Test(arguments: [
        ("aaa", "aa", "[r]a"),
        ("abababab", "abab", "[r][r]"),
        ("xxabcabd", "abcabd", "xx[r]"),
        ("abcabd", "abcabe", "abcabd"),
        ("tail-secret", "secret", "tail-[r]"),
        ("", "secret", ""),
        ("se", "secret", "se"),
    ])
    func occurrencesAreReplacedLeftmostFirstWithoutOverlap(text: String, pattern: String, expected: String) {
        let replaced = HTTPErrorInfo.replacingOccurrences(
            of: Array(pattern.utf8), in: Array(text.utf8), with: Array("[r]".utf8))
        #expect(String(decoding: replaced, as: UTF8.self) == expected)
    }

    // MARK: Paths and registrations

    @Test func pathsAreBuiltFromTheTemplateWithAnEncodedDeviceId() throws {
        let key = try P256.Signing.PrivateKey()
        let plain = FetchRegistration(
            server: URL(string: "https://backend.example/")!, deviceId: "device-1", dispatchTargetId: "t", key: key)
        #expect(plain.serverName == "https://backend.example")
        #expect(
            plain.pendingOperationsURL?.absoluteString
                == "https://backend.example/nevisfido/devices/outofbandoperations/device-1")
        #expect(plain.toleranceMillis == 60_000)

        let prefixed = FetchRegistration(
            server: URL(string: "https://host.example/auth")!, deviceId: "a/b c?d", dispatchTargetId: "t",
            key: key, paths: FetchPaths(pendingOperations: "/fido/ops/{deviceId}/pending"),
            toleranceMillis: 30_000)
        #expect(
            prefixed.pendingOperationsURL?.absoluteString == "https://host.example/auth/fido/ops/a%2Fb%20c%3Fd/pending")
        #expect(prefixed.toleranceMillis == 30_000)
        #expect(
            FetchPaths.default.pendingOperationsPath(deviceId: "..") == "/nevisfido/devices/outofbandoperations/%2E%2E")
    }

    @Test func aLazyKeyIsLoadedOnceAndAFailureIsRetriedLater() throws {
        let key = try P256.Signing.PrivateKey()
        let attempts = Locked(0)
        let source = SigningKeySource(label: "flaky") {
            let attempt = attempts.withLock {
                $0 += 1
                return $0
            }
            if attempt == 1 { throw DeviceSigningError(.keyNotFound, "not yet") }
            return key
        }
        #expect(throws: DeviceSigningError.self) { try source.key() }
        #expect(!source.isLoaded)
        #expect(try source.key().publicKey == key.publicKey)
        #expect(try source.key().publicKey == key.publicKey)
        #expect(attempts.withLock { $0 } == 2)
        #expect(!source.description.contains("BEGIN"))
    }

    // MARK: Transport pieces

    @Test func loopbackHosts() {
        for host in [
            "localhost", "LocalHost", "127.0.0.1", "127.255.255.254", "::1", "[::1]", "0:0:0:0:0:0:0:1",
            "::ffff:127.0.0.1",
        ] {
            #expect(TransportSecurity.isLoopback(host: host), "\(host)")
        }
        for host in [
            "128.0.0.1", "10.0.0.1", "126.255.255.255", "127.1", "127.0.0.1.example", "localhost.", "localhost.example",
            "foo.localhost",
            "::2", "::", "0.0.0.0", "::ffff:10.0.0.1", "example.com", "",
            // A NUL (URL.host decodes %00) would cut the name short for inet_pton.
            "127.0.0.1\u{0}.evil.example", "::1\u{0}x", "localhost\u{0}",
        ] {
            #expect(!TransportSecurity.isLoopback(host: host), "\(host)")
        }
        let encodedNUL = URL(string: "http://127.0.0.1%00.evil.example/")
        #expect(encodedNUL.flatMap(TransportSecurity.refusal(for:)) != nil, "\(String(describing: encodedNUL?.host))")
    }

    @Test func answersNormaliseHeaderNamesAndCutBodies() {
        let answer = HTTPAnswer(
            status: 200, headers: ["Content-Type": "application/json", "DATE": "x"],
            body: Data(count: HTTPAnswer.maximumBodyBytes + 1))
        #expect(answer.header("content-type") == "application/json")
        #expect(answer.header("Date") == "x")
        #expect(answer.bodyWasCutOff)
        #expect(answer.body.count == HTTPAnswer.maximumBodyBytes)
        let mapped = FetchErrorMapping.map(
            .answer(answer), context: .init(server: "s", estimatedOffsetMillis: nil, toleranceMillis: 60_000))
        #expect(mapped.failureCode == "invalidResponse")
        guard case .failure(let error) = mapped else { return }
        #expect(error.invalidResponse?.kind == .tooLarge)
    }

    @Test func urlSessionErrorCodesMapToCauses() {
        let cases: [(Int, NetworkFailure.Kind?)] = [
            (-1004, .connectionRefused), (-1003, .hostNotFound), (-1006, .hostNotFound), (-1001, .timedOut),
            (-999, .cancelled),
            (-1005, .connectionLost), (-1011, .connectionLost), (-1009, .other), (-1002, nil),
            // FoundationNetworking's TLS codes: −1201 secure connection failed, −1202 bad date,
            // −1203 untrusted, −1207 client certificate required.
            (-1200, .tlsHandshake), (-1201, .tlsHandshake), (-1202, .tlsCertificateExpired),
            (-1203, .tlsUntrustedCertificate), (-1207, .tlsHandshake),
        ]
        for (code, kind) in cases {
            let result = TransportResult.from(urlSessionError: NSError(domain: NSURLErrorDomain, code: code))
            switch (result, kind) {
            case (.failure(let failure), let kind?): #expect(failure.kind == kind, "\(code)")
            case (.notHTTP, nil): break
            default: Issue.record("\(code) mapped to \(result)")
            }
        }
    }

    @Test func timeoutIntervalsAreWholeSecondsAboveTheClientTimeout() {
        #expect(URLSessionTransport.timeoutInterval(.milliseconds(300)) == 2)
        #expect(URLSessionTransport.timeoutInterval(.seconds(15)) == 16)
        #expect(URLSessionTransport.timeoutInterval(.milliseconds(15_001)) == 17)
    }
}

extension Result where Failure == PendingOutOfBandOperationsError {
    var failureCode: String? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}

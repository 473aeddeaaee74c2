#if os(Linux)
    import FetchChannelTestSupport
    import Foundation
    import Testing

    @testable import FetchChannel

    /// The transport's pure parts: header lines in and out, timeouts, and the CURLcode mapping
    /// (codes as libcurl 7.88 numbers them in curl.h).
    @Suite(.dedicatedThread) struct CurlPartsTests {
        static func head(_ lines: [String]) -> CurlResponseHead {
            var head = CurlResponseHead()
            for line in lines {
                Array(line.utf8).withUnsafeBytes { head.receive(line: $0) }
            }
            return head
        }

        @Test func theFinalHeadReplacesInterimOnes() {
            let head = Self.head([
                "HTTP/1.1 100 Continue\r\n", "X-Interim: 1\r\n", "\r\n",
                "HTTP/1.1 201 Created\r\n", "Content-Type: application/json\r\n", "Set-Cookie: a=1\r\n",
                "SET-COOKIE: b=2\r\n", "X-Folded: one\r\n", "\t two\r\n", "Content-Length: 12\r\n", "\r\n",
                "X-Trailer: ignored\r\n",
            ])
            #expect(head.status == 201)
            #expect(head.isComplete)
            #expect(head.headers["x-interim"] == nil)
            #expect(head.headers["content-type"] == "application/json")
            #expect(head.headers["set-cookie"] == "a=1, b=2")
            #expect(head.headers["x-folded"] == "one two")
            #expect(head.headers["x-trailer"] == nil)
            #expect(head.contentLength == 12)
        }

        /// Only a head's first line is its status line: a later `HTTP/1.1 200 OK` is a header
        /// line, as libcurl framed it. It used to start the head over, dropping a
        /// `Transfer-Encoding: gzip` or an over-cap `Content-Length` before they were checked.
        @Test func aStatusLineInsideAHeadDoesNotStartItOver() {
            let head = Self.head([
                "HTTP/1.1 200 OK\r\n", "Transfer-Encoding: gzip\r\n", "Content-Length: 2000000\r\n",
                "HTTP/1.1 204 No Content\r\n", "\r\n",
            ])
            #expect(head.status == 200)
            #expect(head.headers["transfer-encoding"] == "gzip")
            #expect(head.contentLength == 2_000_000)
            #expect(head.isComplete)
        }

        /// A status line is read as libcurl reads it: three digits after the version's space and
        /// any blanks, whatever follows them. `200OK` and `200\tOK` are final heads to libcurl;
        /// read as no status, the head was waited on as an interim one and never checked.
        @Test(
            arguments: [
                ("HTTP/1.1 200 OK", 200), ("HTTP/1.1 200", 200), ("HTTP/1.1 200OK", 200), ("HTTP/1.1 200\tOK", 200),
                ("HTTP/1.1  \t404 Not Found", 404), ("HTTP/1.0 503 x y", 503), ("HTTP/1.1 100 Continue", 100),
                ("HTTP/1.1 2000 OK", nil), ("HTTP/1.1 20 OK", nil), ("HTTP/1.1 099 x", nil), ("HTTP/1.1 OK", nil),
                ("HTTP/1.1", nil), ("HTTP/1.1 +20 OK", nil),
            ] as [(String, Int?)])
        func statusLinesAreReadAsLibcurlReadsThem(line: String, status: Int?) {
            let head = Self.head([line + "\r\n", "Content-Length: 2\r\n", "\r\n"])
            #expect(head.status == status, "\(line)")
            #expect(head.isComplete == (status.map { !(100...199).contains($0) } ?? false), "\(line)")
        }

        /// Blanks before a field's colon (forbidden, passed on by libcurl) do not hide the field:
        /// `Age : 120` is the Age field, so a cached answer still gives no clock sample.
        @Test func blanksBeforeTheColonDoNotRenameAField() {
            let head = Self.head(["HTTP/1.1 200 OK\r\n", "Age : 120\r\n", "Date\t: x\r\n", "\r\n"])
            #expect(head.headers["age"] == "120")
            #expect(head.headers["date"] == "x")
        }

        @Test func contentLengthsAreReadSafely() {
            let overflowing = Self.head(["HTTP/1.1 200 OK\r\n", "Content-Length: 99999999999999999999999\r\n", "\r\n"])
            #expect(overflowing.contentLength == Int.max)
            #expect(
                Self.head(["HTTP/1.1 200 OK\r\n", "Content-Length: 5, 2000000\r\n", "\r\n"]).contentLength == 2_000_000)
            #expect(Self.head(["HTTP/1.1 200 OK\r\n", "Content-Length: -1\r\n", "\r\n"]).contentLength == nil)
            #expect(Self.head(["HTTP/1.1 200 OK\r\n", "\r\n"]).contentLength == nil)
            #expect(Self.head(["HTTP/1.1 2000 Odd\r\n", "\r\n"]).status == nil)
        }

        @Test func headerLinesSuppressLibcurlDefaultsAndKeepTheCallersOwn() throws {
            let plain = try CurlHeaderLines.lines(for: ["Device-Signature": "a.b.c"], hasBody: false)
            #expect(plain == ["Device-Signature: a.b.c", "Accept:", "Expect:"])
            let posted = try CurlHeaderLines.lines(
                for: ["Content-Type": "application/json", "accept": "application/json"],
                hasBody: true)
            #expect(posted == ["Content-Type: application/json", "accept: application/json", "Expect:"])
            #expect(try CurlHeaderLines.lines(for: ["X-Empty": ""], hasBody: false).first == "X-Empty;")
        }

        /// Blanks around a value are not part of it (RFC 9110 §5.5). A value of blanks alone was
        /// written "Name:   ", which libcurl reads as "remove the field": it was not sent, and
        /// "Accept:  " removed the caller's own Accept.
        @Test func blanksAroundAValueAreNotSentAndBlanksAloneAreAnEmptyValue() throws {
            let lines = try CurlHeaderLines.lines(
                for: ["Accept": " \t", "X-Sig": "   ", "X-Padded": "\t a\tb  "], hasBody: false)
            #expect(lines == ["Accept;", "X-Padded: a\tb", "X-Sig;", "Expect:"])
        }

        @Test(arguments: [
            ["A\r\nB": "v"], ["Name": "v\r"], ["Name": "v\n"], ["Name": "v\u{0}"], ["Na me": "v"], ["Name:": "v"],
            ["Name": "\u{B}"], ["Name": "v\u{1}"], ["Name": "v\u{7F}"], ["Name": "\u{1B}[2J"],
        ])
        func headerFieldsThatCouldSplitARequestAreRefused(_ headers: [String: String]) {
            #expect(throws: NetworkFailure.self) { try CurlHeaderLines.lines(for: headers, hasBody: false) }
        }

        /// Two keys that name one field (names are case-insensitive) would send it twice: two
        /// Device-Signatures, say, of which a backend or proxy might read either.
        @Test func aFieldNamedTwiceInDifferentCaseIsRefused() throws {
            let headers = ["Device-Signature": "a.b.c", "device-signature": "d.e.f"]
            #expect(throws: NetworkFailure.self) { try CurlHeaderLines.lines(for: headers, hasBody: false) }
            #expect(
                try CurlHeaderLines.lines(for: ["Device-Signature": "a.b.c", "X-Other": "1"], hasBody: false).count == 4
            )
        }

        /// The URLSession transport (where libcurl is not built) refuses the same fields, before
        /// any connection: the request goes to a port nothing listens on, which would fail otherwise.
        @Test func theURLSessionTransportRefusesTheSameHeaderFields() async throws {
            let url = try #require(URL(string: "http://127.0.0.1:1/"))
            let request = TransportRequest(
                method: "GET", url: url, headers: ["Name": "v\r\nInjected: 1"], body: nil, timeout: .seconds(5))
            let result = await URLSessionTransport().send(request)
            guard case .failure(let failure) = result else {
                Issue.record("sent: \(result)")
                return
            }
            #expect(failure.kind == .other && failure.detail.contains("control character"), "\(failure)")
        }

        @Test func timeoutsAreWholeMillisecondsRoundedUpAndNeverZero() {
            #expect(CurlRequestOptions.timeoutMilliseconds(.milliseconds(300)) == 300)
            #expect(CurlRequestOptions.timeoutMilliseconds(.microseconds(300_001)) == 301)
            #expect(CurlRequestOptions.timeoutMilliseconds(.seconds(15)) == 15_000)
            #expect(CurlRequestOptions.timeoutMilliseconds(.zero) == 1, "0 would mean no timeout to libcurl")
            #expect(CurlRequestOptions.timeoutMilliseconds(.milliseconds(-5)) == 1)
            #expect(CurlRequestOptions.timeoutMilliseconds(.seconds(10_000_000)) == 86_400_000)
        }

        static func facts(
            _ code: Int, message: String = "m", verifyResult: Int = 0, osErrno: Int = 0,
            trust: TLSTrust = .system
        ) -> CurlFailureFacts {
            CurlFailureFacts(
                code: code, message: message, verifyResult: verifyResult, osErrno: osErrno,
                host: "backend.example", trust: trust, timeout: .seconds(15))
        }

        @Test func pinListsThatDifferOnlyInCaseDifferIgnoringCase() {
            // libcurl matches a kept-alive connection to a request by its pin text, ignoring case.
            let pin = "sha256//" + Data((0..<32).map { UInt8($0 * 7) }).base64EncodedString()
            let flipped = pin.replacingOccurrences(of: "A", with: "a")
            #expect(pin != flipped)
            let option = CurlRequestOptions.pinnedPublicKeyOption([pin])
            let flippedOption = CurlRequestOptions.pinnedPublicKeyOption([flipped])
            #expect(option.lowercased() != flippedOption.lowercased())
            #expect(
                option.hasPrefix(pin + ";sha256//case-"), "the real pins come first, in libcurl's list form: \(option)")
            #expect(!option.dropFirst(pin.count).contains("="), "the extra entry is no base64 digest")
            let two = CurlRequestOptions.pinnedPublicKeyOption([pin, flipped])
            #expect(two.hasPrefix(pin + ";" + flipped + ";sha256//case-"))
            #expect(
                two == CurlRequestOptions.pinnedPublicKeyOption([pin, flipped]), "the same pins give the same text")
        }

        @Test func networkCodesMapToKinds() {
            let cases: [(CurlFailureFacts, NetworkFailure.Kind)] = [
                (Self.facts(7, osErrno: Int(ECONNREFUSED)), .connectionRefused),
                (Self.facts(7, osErrno: Int(ENETUNREACH)), .other),
                (Self.facts(6), .hostNotFound), (Self.facts(28), .timedOut), (Self.facts(52), .connectionLost),
                (Self.facts(55), .connectionLost), (Self.facts(56), .connectionLost), (Self.facts(18), .connectionLost),
                (Self.facts(3), .invalidURL), (Self.facts(42), .cancelled), (Self.facts(27), .other),
            ]
            for (facts, kind) in cases {
                #expect(CurlFailureMapping.result(for: facts).failureKind == kind, "CURLcode \(facts.code)")
            }
            for code in [1, 8] {
                guard case .notHTTP = CurlFailureMapping.result(for: Self.facts(code)) else {
                    Issue.record("CURLcode \(code) is about the reply: not HTTP")
                    continue
                }
            }
        }

        @Test func tlsFailuresSayWhatToCheck() throws {
            let trust = try TLSTrust.caFile("/etc/backend-ca.pem", pins: [TLSTrustTests.goodPin])
            let untrusted = CurlFailureMapping.result(for: Self.facts(60, verifyResult: 20, trust: trust))
            #expect(untrusted.failureKind == .tlsUntrustedCertificate)
            #expect(untrusted.failureDetail?.contains("the CA file /etc/backend-ca.pem") == true)
            let system = CurlFailureMapping.result(for: Self.facts(60, verifyResult: 20))
            #expect(system.failureDetail?.contains("the system CAs") == true)

            let expired = CurlFailureMapping.result(for: Self.facts(60, verifyResult: 10))
            #expect(expired.failureKind == .tlsCertificateExpired)
            #expect(expired.failureDetail?.contains("date and time") == true)
            #expect(
                CurlFailureMapping.result(for: Self.facts(60, verifyResult: 9)).failureKind == .tlsCertificateExpired)

            let mismatch = "SSL: no alternative certificate subject name matches target host name 'backend.example'"
            let name = CurlFailureMapping.result(for: Self.facts(60, message: mismatch, verifyResult: 1))
            #expect(name.failureKind == .tlsHostnameMismatch)
            #expect(name.failureDetail?.contains("backend.example") == true)

            // A certificate that names nothing (no subjectAltName, no common name) is a name
            // failure too, though OpenSSL's own check passed.
            let nameless = "SSL: unable to obtain common name from peer certificate"
            #expect(
                CurlFailureMapping.result(for: Self.facts(60, message: nameless, verifyResult: 0)).failureKind
                    == .tlsHostnameMismatch)

            let pin = CurlFailureMapping.result(for: Self.facts(90, trust: trust))
            #expect(pin.failureKind == .tlsPinMismatch)
            #expect(pin.failureDetail?.contains(TLSTrustTests.goodPin) == true)

            let unreadable = CurlFailureMapping.result(for: Self.facts(77, trust: trust))
            #expect(unreadable.failureKind == .tlsUntrustedCertificate)
            #expect(unreadable.failureDetail?.hasPrefix("The CA file /etc/backend-ca.pem could not be loaded") == true)

            for code in [35, 58, 59, 83] {
                #expect(
                    CurlFailureMapping.result(for: Self.facts(code)).failureKind == .tlsHandshake, "CURLcode \(code)")
            }
            // libcurl's trailing space is not quoted.
            let syscall = CurlFailureMapping.result(
                for: Self.facts(35, message: "SSL_ERROR_SYSCALL in connection to 127.0.0.1:4433 "))
            #expect(
                syscall.failureDetail?.hasPrefix(
                    "No TLS connection to backend.example (SSL_ERROR_SYSCALL in connection to 127.0.0.1:4433). ")
                    == true,
                "\(syscall.failureDetail ?? "")")
        }
    }
#endif

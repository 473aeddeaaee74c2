import Foundation
import Testing

@testable import FetchChannelEmulator

extension HTTPServerTests {
    @Suite struct RequestParserTests {
        /// A parser case: raw request bytes and the expected status (nil = parsed successfully).
        struct Case: CustomTestStringConvertible, Sendable {
            let name: String
            let raw: String
            let status: Int?
            var testDescription: String { name }
        }

        static let limits = HTTPServer.Limits(
            maxRequestLineLength: 64, maxHeaderCount: 4, maxHeaderBytes: 128, maxBodyBytes: 16)

        static let cases: [Case] = [
            Case(name: "minimal GET", raw: "GET / HTTP/1.1\r\nHost: a\r\n\r\n", status: nil),
            Case(name: "HTTP/1.0 without Host", raw: "GET / HTTP/1.0\r\n\r\n", status: nil),
            Case(name: "leading empty line", raw: "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", status: nil),
            Case(
                name: "eight leading empty lines",
                raw: String(repeating: "\r\n", count: 8) + "GET / HTTP/1.1\r\nHost: a\r\n\r\n", status: nil),
            // A stream of empty lines is no request: it would hold the connection without one.
            Case(
                name: "nine leading empty lines",
                raw: String(repeating: "\r\n", count: 9) + "GET / HTTP/1.1\r\nHost: a\r\n\r\n", status: 400),
            Case(name: "absolute-form", raw: "GET http://a:8/p?q HTTP/1.1\r\nHost: a\r\n\r\n", status: nil),
            Case(name: "OPTIONS *", raw: "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", status: nil),
            Case(
                name: "body within limit",
                raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 16\r\n\r\n0123456789abcdef", status: nil),
            Case(
                name: "equal duplicate Content-Length",
                raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2, 02\r\n\r\nok", status: nil),
            Case(name: "obs-text in a value", raw: "GET / HTTP/1.1\r\nHost: a\r\nX: caf\u{E9}\r\n\r\n", status: nil),

            Case(name: "bare LF after request line", raw: "GET / HTTP/1.1\nHost: a\r\n\r\n", status: 400),
            Case(name: "bare LF after a field", raw: "GET / HTTP/1.1\r\nHost: a\n\r\n", status: 400),
            Case(name: "bare CR in a value", raw: "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", status: 400),
            Case(name: "bare CR in the request line", raw: "GET /\r HTTP/1.1\r\nHost: a\r\n\r\n", status: 400),
            Case(name: "NUL in a value", raw: "GET / HTTP/1.1\r\nHost: a\r\nX: a\u{0}b\r\n\r\n", status: 400),
            Case(name: "obs-fold", raw: "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n", status: 400),
            Case(name: "whitespace before colon", raw: "GET / HTTP/1.1\r\nHost : a\r\n\r\n", status: 400),
            Case(name: "non-token field name", raw: "GET / HTTP/1.1\r\nHost: a\r\nX(y): 1\r\n\r\n", status: 400),
            Case(name: "empty field name", raw: "GET / HTTP/1.1\r\nHost: a\r\n: v\r\n\r\n", status: 400),
            Case(name: "field without colon", raw: "GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", status: 400),
            Case(name: "non-token method", raw: "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", status: 400),
            Case(name: "double space", raw: "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", status: 400),
            Case(name: "missing version", raw: "GET /\r\nHost: a\r\n\r\n", status: 400),
            Case(name: "lower-case version", raw: "GET / http/1.1\r\nHost: a\r\n\r\n", status: 400),
            Case(name: "two-digit minor version", raw: "GET / HTTP/1.10\r\nHost: a\r\n\r\n", status: 400),
            Case(name: "HTTP/2.0", raw: "GET / HTTP/2.0\r\nHost: a\r\n\r\n", status: 505),
            Case(name: "HTTP/0.9", raw: "GET / HTTP/0.9\r\n\r\n", status: 505),
            Case(name: "fragment in target", raw: "GET /#f HTTP/1.1\r\nHost: a\r\n\r\n", status: 400),
            Case(name: "non-ASCII target", raw: "GET /\u{E9} HTTP/1.1\r\nHost: a\r\n\r\n", status: 400),
            Case(name: "authority-form", raw: "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", status: 400),
            Case(name: "asterisk with GET", raw: "GET * HTTP/1.1\r\nHost: a\r\n\r\n", status: 400),
            Case(name: "missing Host", raw: "GET / HTTP/1.1\r\n\r\n", status: 400),
            Case(name: "two Host fields", raw: "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", status: 400),
            Case(
                name: "target too long",
                raw: "GET /" + String(repeating: "a", count: 80) + " HTTP/1.1\r\nHost: a\r\n\r\n", status: 414),
            Case(name: "method too long", raw: String(repeating: "M", count: 80) + " / HTTP/1.1\r\n\r\n", status: 400),
            Case(
                name: "too many fields", raw: "GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n",
                status: 431),
            Case(
                name: "header section too large",
                raw: "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "v", count: 130) + "\r\n\r\n", status: 431),
            Case(
                name: "negative Content-Length", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
                status: 400),
            Case(
                name: "signed Content-Length", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\nx",
                status: 400),
            Case(
                name: "empty Content-Length", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \r\n\r\n", status: 400
            ),
            Case(
                name: "hex Content-Length", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x10\r\n\r\n",
                status: 400),
            Case(
                name: "huge Content-Length",
                raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n", status: 400),
            Case(
                name: "conflicting Content-Length",
                raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx", status: 400),
            Case(
                name: "conflicting Content-Length list",
                raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 2\r\n\r\nxx", status: 400),
            Case(
                name: "body over the limit", raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 17\r\n\r\n",
                status: 413),
            Case(
                name: "chunked", raw: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                status: 411),
            Case(
                name: "gzip then chunked",
                raw: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n", status: 411),
            Case(
                name: "chunked not final",
                raw: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", status: 400),
            Case(
                name: "chunked and Content-Length",
                raw: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
                status: 400),
            Case(
                name: "Transfer-Encoding in HTTP/1.0", raw: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
                status: 400),
        ]

        private static func parse(_ bytes: [UInt8], chunkSize: Int) -> HTTPRequestParser.Event {
            var parser = HTTPRequestParser(limits: limits, peer: HTTPPeerAddress(host: "127.0.0.1", port: 1))
            var offset = 0
            while true {
                let event = parser.next()
                if case .needMore = event, offset < bytes.count {
                    let end = min(offset + chunkSize, bytes.count)
                    parser.append(bytes[offset..<end])
                    offset = end
                    continue
                }
                return event
            }
        }

        @Test(arguments: cases)
        func wholeAndByteByByteGiveTheSameVerdict(_ testCase: Case) {
            let bytes = Array(testCase.raw.utf8)
            for chunkSize in [bytes.count, 1] {
                switch Self.parse(bytes, chunkSize: chunkSize) {
                case .request:
                    #expect(testCase.status == nil, "\(testCase.name) parsed, chunk \(chunkSize)")
                case .failure(let error):
                    #expect(testCase.status == error.status, "\(testCase.name): \(error), chunk \(chunkSize)")
                case .needMore:
                    Issue.record("\(testCase.name): incomplete, chunk \(chunkSize)")
                }
            }
        }

        @Test func requestFieldsAreParsed() throws {
            let raw =
                "POST http://example.com:8080?a=b HTTP/1.1\r\nHost: example.com\r\nX-A:  v1 \r\nx-a: v2\r\nContent-Length: 3\r\n\r\nxyz"
            guard case .request(let request) = Self.parse(Array(raw.utf8), chunkSize: 7) else {
                Issue.record("not parsed")
                return
            }
            #expect(request.method == "POST")
            #expect(request.target == "http://example.com:8080?a=b")
            #expect(request.path == "/")
            #expect(request.query == "a=b")
            #expect(request.version == .http1_1)
            #expect(request.headers.values(for: "X-A") == ["v1", "v2"])
            #expect(request.headers.fields.map(\.name) == ["Host", "X-A", "x-a", "Content-Length"])
            #expect(request.body == Array("xyz".utf8))
        }

        /// A higher minor version of HTTP/1 is served as 1.1 (RFC 9110 §6.2), Host and all; before,
        /// HTTP/1.2 was answered 505. Another major version still is.
        @Test func aHigherMinorVersionIsServedAsHTTP11() throws {
            for minor in 2...9 {
                let raw = "GET /v HTTP/1.\(minor)\r\nHost: a\r\n\r\n"
                guard case .request(let request) = Self.parse(Array(raw.utf8), chunkSize: 5) else {
                    Issue.record("HTTP/1.\(minor) was not parsed")
                    continue
                }
                #expect(request.version == .http1_1, "HTTP/1.\(minor)")
                #expect(request.path == "/v")
                guard case .failure(let error) = Self.parse(Array("GET / HTTP/1.\(minor)\r\n\r\n".utf8), chunkSize: 5)
                else {
                    Issue.record("HTTP/1.\(minor) without Host was parsed")
                    continue
                }
                #expect(error.status == 400, "HTTP/1.\(minor) without Host")
            }
            guard case .failure(let error) = Self.parse(Array("GET / HTTP/2.0\r\nHost: a\r\n\r\n".utf8), chunkSize: 5)
            else {
                Issue.record("HTTP/2.0 was parsed")
                return
            }
            #expect(error.status == 505)
        }

        /// Over a socket: an HTTP/1.2 request gets the handler's answer (in HTTP/1.1, kept alive),
        /// an HTTP/2.0 one still 505.
        @Test func aServerAnswersHTTP12AsHTTP11() throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            defer { client.close() }
            let answer = try client.roundTrip("GET /minor HTTP/1.2\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(answer.status == 200)
            #expect(answer.headers["Connection"] == nil)
            #expect(answer.bodyText.contains("\"path\":\"/minor\""))
            #expect(try client.roundTrip("GET / HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n").status == 505)
        }

        @Test func pipelinedRequestsComeOutOneByOne() {
            var parser = HTTPRequestParser(limits: Self.limits, peer: HTTPPeerAddress(host: "::1", port: 1))
            parser.append(
                Array(
                    "GET /1 HTTP/1.1\r\nHost: a\r\n\r\nPOST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\nzGET /3"
                        .utf8))
            var paths: [String] = []
            while case .request(let request) = parser.next() {
                paths.append(request.path)
            }
            #expect(paths == ["/1", "/2"])
            #expect(parser.hasStartedRequest)
        }

        /// A large body followed by a stray CRLF in the same read: the idle connection keeps the
        /// two bytes, not the body's buffer.
        @Test func aLargeRequestsBufferIsNotKeptAfterIt() {
            let limits = HTTPServer.Limits(maxBodyBytes: 1 << 20)
            var parser = HTTPRequestParser(limits: limits, peer: HTTPPeerAddress(host: "127.0.0.1", port: 1))
            let body = [UInt8](repeating: 0x61, count: 1 << 20)
            parser.append(
                Array("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body + [13, 10])
            guard case .request(let request) = parser.next() else {
                Issue.record("not parsed")
                return
            }
            #expect(request.body.count == body.count)
            #expect(parser.bufferCapacity <= HTTPRequestParser.keptCapacity)
            guard case .needMore = parser.next() else {
                Issue.record("the stray CRLF is not a request")
                return
            }
        }

        @Test func headerValueBytesThatAreNotUTF8SurviveAsLatin1() {
            var parser = HTTPRequestParser(limits: Self.limits, peer: HTTPPeerAddress(host: "127.0.0.1", port: 1))
            parser.append(Array("GET / HTTP/1.1\r\nHost: a\r\nX: ".utf8) + [0xE9, 0xFF] + Array("\r\n\r\n".utf8))
            guard case .request(let request) = parser.next() else {
                Issue.record("not parsed")
                return
            }
            #expect(request.headers["X"] == "\u{E9}\u{FF}")
        }
    }

    @Suite struct HeadersTests {
        @Test func lookupIsCaseInsensitiveAndKeepsOrder() {
            var headers: HTTPHeaders = ["Content-Type": "a", "X-Trace": "1"]
            headers.add(name: "x-trace", value: "2")
            #expect(headers["content-type"] == "a")
            #expect(headers["X-TRACE"] == "1")
            #expect(headers.values(for: "X-Trace") == ["1", "2"])
            #expect(headers.contains("CONTENT-TYPE"))
            #expect(!headers.contains("Content-Typ"))
            headers.replaceOrAdd(name: "X-Trace", value: "3")
            #expect(headers.fields.map(\.value) == ["a", "3"])
            headers.remove(name: "CONTENT-type")
            #expect(headers.count == 1)
        }

        @Test func listTokensAreFoundInAnyField() {
            let headers = HTTPHeaders([("Connection", "Upgrade"), ("connection", " keep-alive , CLOSE")])
            #expect(headers.containsToken("close", inField: "Connection"))
            #expect(headers.containsToken("keep-alive", inField: "CONNECTION"))
            #expect(!headers.containsToken("clos", inField: "Connection"))
        }

        @Test func connectionPersistenceFollowsRFC9112() {
            #expect(!HTTPRequest(method: "GET", target: "/").wantsConnectionClose)
            #expect(HTTPRequest(method: "GET", target: "/", headers: ["Connection": "close"]).wantsConnectionClose)
            #expect(HTTPRequest(method: "GET", target: "/", version: .http1_0).wantsConnectionClose)
            #expect(
                !HTTPRequest(method: "GET", target: "/", version: .http1_0, headers: ["Connection": "Keep-Alive"])
                    .wantsConnectionClose)
        }

        @Test func requestInitSplitsTheTarget() {
            let request = HTTPRequest(method: "GET", target: "/a/b?c=d?e")
            #expect(request.path == "/a/b")
            #expect(request.query == "c=d?e")
            #expect(HTTPRequest(method: "GET", target: "/x").query == nil)
        }
    }

    @Suite struct ResponseTests {
        @Test func reasonPhrasesAndJSON() throws {
            #expect(HTTPResponse(status: 404).reasonPhrase == "Not Found")
            #expect(HTTPResponse(status: 431).reasonPhrase == "Request Header Fields Too Large")
            #expect(HTTPResponse(status: 299).reasonPhrase == "")

            let encoded = try HTTPResponse.json(status: 201, ["b": 2, "a": 1])
            #expect(encoded.status == 201)
            #expect(encoded.headers["Content-Type"] == "application/json")
            #expect(String(decoding: encoded.body, as: UTF8.self) == "{\"a\":1,\"b\":2}")

            let object = try HTTPResponse.json(status: 200, jsonObject: ["k": [1, 2]])
            #expect(String(decoding: object.body, as: UTF8.self) == "{\"k\":[1,2]}")
            #expect(throws: (any Error).self) { try HTTPResponse.json(status: 200, jsonObject: "bare string") }
        }

        @Test func serializerFramesEveryAnswer() {
            let response = HTTPResponse(
                status: 200, headers: ["Content-Length": "999", "X": "y"], body: Array("hi".utf8))
            let bytes = HTTPResponseSerializer.serialize(response, dateMillis: 0, omitBody: false, connection: .close)
            #expect(
                String(decoding: bytes, as: UTF8.self)
                    == "HTTP/1.1 200 OK\r\nDate: Thu, 01 Jan 1970 00:00:00 GMT\r\nX: y\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi"
            )

            let hang = HTTPResponseSerializer.serialize(
                response, dateMillis: 0, omitBody: false, connection: .none, contentLengthSurplus: 1)
            #expect(String(decoding: hang, as: UTF8.self).contains("Content-Length: 3\r\n\r\nhi"))
            // An answer that owes no body hangs in its head: complete, it would leave the next
            // request on the connection unread.
            for (status, omitBody) in [(200, true), (204, false), (304, false)] {
                let bodyless = HTTPResponseSerializer.serialize(
                    HTTPResponse(status: status, headers: ["X": "y"], body: status == 200 ? Array("hi".utf8) : []),
                    dateMillis: 0, omitBody: omitBody, connection: .none, contentLengthSurplus: 1)
                let text = String(decoding: bodyless, as: UTF8.self)
                #expect(text.hasSuffix("X: y\r\n") || text.hasSuffix("Content-Length: 3\r\n"), "\(status): \(text)")
                #expect(!text.contains("\r\n\r\n"), "\(status): \(text)")
            }

            let interim = HTTPResponseSerializer.serialize(
                HTTPResponse(status: 101), dateMillis: 0, omitBody: false, connection: .none)
            #expect(String(decoding: interim, as: UTF8.self).hasPrefix("HTTP/1.1 500 Internal Server Error\r\n"))
        }
    }

    @Suite struct DateTests {
        @Test(arguments: [
            (Int64(0), "Thu, 01 Jan 1970 00:00:00 GMT"),
            (Int64(784_111_777_000), "Sun, 06 Nov 1994 08:49:37 GMT"),
            (Int64(784_111_777_999), "Sun, 06 Nov 1994 08:49:37 GMT"),
            (Int64(951_782_400_000), "Tue, 29 Feb 2000 00:00:00 GMT"),
            (Int64(4_107_542_399_000), "Sun, 28 Feb 2100 23:59:59 GMT"),
            (Int64(4_107_542_400_000), "Mon, 01 Mar 2100 00:00:00 GMT"),
            (Int64(1_700_000_000_000), "Tue, 14 Nov 2023 22:13:20 GMT"),
            (Int64(-1), "Wed, 31 Dec 1969 23:59:59 GMT"),
            (Int64(-86_400_000), "Wed, 31 Dec 1969 00:00:00 GMT"),
            (Int64.max, "Fri, 31 Dec 9999 23:59:59 GMT"),
        ])
        func imfFixdate(millis: Int64, expected: String) {
            #expect(HTTPServerDate.imfFixdate(epochMillis: millis) == expected)
        }

        @Test func systemClockIsNow() {
            let reference = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(abs(HTTPServerDate.systemMillis() - reference) < 5_000)
        }
    }
}

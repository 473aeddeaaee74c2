import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelEmulator

extension HTTPServerTests {
    /// The server's own error answers have the wire's error body, `{errorCode, message}` with a
    /// code of `WireErrorCode` (docs/ARCHITECTURE.md, "Wire contract"): before, they sent
    /// `{errorCode, reason}` with codes made up from the status's reason phrase.
    @Suite struct ErrorBodyTests {
        struct ErrorCase: CustomTestStringConvertible, Sendable {
            let name: String
            let request: String
            let status: Int
            let code: WireErrorCode
            var testDescription: String { name }
        }

        static let cases: [ErrorCase] = [
            ErrorCase(
                name: "body over the limit",
                request: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2097152\r\n\r\n", status: 413,
                code: .httpContentTooLarge),
            ErrorCase(
                name: "101 header fields",
                request: "GET / HTTP/1.1\r\nHost: x\r\n" + (0..<100).map { "X-\($0): v\r\n" }.joined() + "\r\n",
                status: 431, code: .httpHeaderFieldsTooLarge),
            ErrorCase(
                name: "two Host fields", request: "GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", status: 400,
                code: .malformedRequest),
            ErrorCase(
                name: "HTTP/2.0", request: "GET / HTTP/2.0\r\nHost: x\r\n\r\n", status: 505,
                code: .httpVersionNotSupported),
        ]

        @Test(arguments: cases)
        func isTheWiresErrorBody(_ errorCase: ErrorCase) throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            defer { client.close() }
            try client.send(errorCase.request)
            let response = try client.readResponse()
            #expect(response.status == errorCase.status, "\(errorCase.name)")
            #expect(response.headers["Content-Type"] == WireMediaType.json, "\(errorCase.name)")
            let body = try #require(
                try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any], "\(errorCase.name)")
            #expect(body[WireErrorCode.Member.errorCode] as? String == errorCase.code.rawValue, "\(errorCase.name)")
            #expect((body[WireErrorCode.Member.message] as? String)?.isEmpty == false, "\(errorCase.name)")
            #expect(
                Set(body.keys) == [WireErrorCode.Member.errorCode, WireErrorCode.Member.message], "\(errorCase.name)")
        }
    }
}

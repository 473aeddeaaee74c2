import DeviceSigning
import FetchChannel
import FetchChannelEmulator
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

@testable import FetchChannelCLI

/// The CLI's own backend calls (register, rotate, its key probe) quote the backend in their errors;
/// like the library's fetch, they never quote the request's Device-Signature back, when a backend
/// or a proxy echoes it, nor a 200's body, which may hold redeem tokens.
@Suite(.dedicatedThread) struct BackendAnswerRedactionTests {
    /// A Device-Signature's shape: three base64url parts, the last (the signature) 86 characters.
    static let signature =
        "eyJhbGciOiJFUzI1NiJ9.eyJpYXQiOjF9."
        + "S1gnAtUrEpArTtHaTmUsTnEvErBeQuOtEdBaCkToAnYoNeWhOrEaDsTaNeRrOrOfThEcLiAnTsOwNcAlLsX"
    static var signaturePart: String { String(signature.split(separator: ".")[2]) }

    /// A backend that answers every request with `respond`'s answer to its Device-Signature.
    private static func withBackend<T>(
        _ respond: @escaping @Sendable (String) -> HTTPResponse, _ body: (URL) async throws -> T
    ) async throws -> T {
        let server = HTTPServer(configuration: .init(host: "127.0.0.1", port: 0)) { request in
            .respond(respond(request.headers[WireHeader.deviceSignature] ?? ""))
        }
        let address = try server.start()
        defer { server.stop() }
        return try await body(try #require(URL(string: "http://127.0.0.1:\(address.port)/targets")))
    }

    @Test(
        arguments: [
            // The error's message, its code, the excerpt of a body that is no error object, a redirect's target.
            { (echo: String) in
                HTTPResponse.json(status: 400, Data(#"{"errorCode":"E","message":"bad \#(echo)"}"#.utf8))
            },
            { echo in HTTPResponse.json(status: 400, Data(#"{"errorCode":"\#(echo)"}"#.utf8)) },
            { echo in HTTPResponse.text(status: 500, "signature=\(echo)") },
            { echo in HTTPResponse.text(status: 500, "part=\(echo.split(separator: ".").last ?? "")") },
            { echo in HTTPResponse(status: 302, headers: ["Location": "/x?sig=\(echo)"]) },
        ] as [@Sendable (String) -> HTTPResponse])
    func anEchoedSignatureIsNeverQuoted(respond: @escaping @Sendable (String) -> HTTPResponse) async throws {
        let summary = try await Self.withBackend(respond) { url in
            try await BackendHTTPClient().send(
                "PATCH", url, json: [:], headers: [DeviceSignatureSigner.headerName: Self.signature]
            ).summary
        }
        #expect(!summary.contains(Self.signaturePart), "\(summary)")
        #expect(summary.contains(HTTPErrorInfo.redactionMarker), "\(summary)")
    }

    /// A success that does not say what the command needs (a registration without a target id, a
    /// rotation that names no target) is reported by its status and Content-Type, not its body.
    @Test func aSuccessIsNeverQuoted() async throws {
        let body = #"{"operations":[{"payload":{"redeemData":{"token":"a-redeem-token-in-a-2xx"}}}]}"#
        let summary = try await Self.withBackend({ _ in .json(status: 201, Data(body.utf8)) }) { url in
            try await BackendHTTPClient().send("POST", url, json: [:]).summary
        }
        #expect(summary == "201 (application/json)", "\(summary)")
    }

    /// Asked for operations encrypted to its key, a backend that answers them in plain JSON gets
    /// no conclusion, and the answer's tokens are not quoted in the reason.
    @Test func aPlainAnswerToTheKeyProbeIsNotQuoted() async throws {
        let token = "redeem-token-that-must-stay-private"
        let operations =
            #"{"operations":[{"creationTimeInEpochMillis":1,"dispatchChannel":"link","payload":{"#
            + #""contentType":"application/json","version":"1","redeemData":{"token":"\#(token)","#
            + #""redeemUrl":"https://backend.example/redeem"}}}]}"#
        let acceptance = try await Self.withBackend({ _ in .json(status: 200, Data(operations.utf8)) }) { url in
            let server = try BackendURL(parsing: "http://127.0.0.1:\(url.port ?? 0)")
            let probe = DispatchTargetKeyProbe(server: server, deviceId: "d", targetId: "t", trust: .system)
            return await probe.acceptance(signature: Self.signature, decryptionKey: try P256.KeyAgreement.PrivateKey())
        }
        guard case .unknown(let why) = acceptance else {
            Issue.record("expected no conclusion, got \(acceptance)")
            return
        }
        #expect(!why.contains(token), "\(why)")
        #expect(why.contains("200 (application/json"), "\(why)")
    }
}

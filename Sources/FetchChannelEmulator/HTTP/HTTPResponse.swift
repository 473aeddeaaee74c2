import FetchChannelWire
import Foundation

/// An answer for the server to write. The server adds `Date` (unless given), `Content-Length` and
/// `Connection`; a `Content-Length` or `Transfer-Encoding` set here is replaced, since the server
/// always frames the body itself.
public struct HTTPResponse: Sendable, Hashable {
    /// Status code, 200...999 (the handler cannot send an interim 1xx; the server answers 500 instead).
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public init(status: Int, headers: HTTPHeaders = [:], body: Data) {
        self.init(status: status, headers: headers, body: [UInt8](body))
    }

    /// The RFC 9110 reason phrase for `status` ("" for unlisted codes).
    public var reasonPhrase: String {
        HTTPStatusReason.phrase(for: status)
    }

    public var bodyData: Data {
        Data(body)
    }

    /// A JSON answer from already-encoded bytes, with `Content-Type: application/json`.
    public static func json(status: Int, _ data: Data, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = headers
        headers.replaceOrAdd(name: WireHeader.contentType, value: WireMediaType.json)
        return HTTPResponse(status: status, headers: headers, body: data)
    }

    /// A JSON answer from an `Encodable` value (keys sorted, so bodies are reproducible).
    public static func json<Value: Encodable>(
        status: Int, _ value: Value, headers: HTTPHeaders = [:]
    ) throws -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return json(status: status, try encoder.encode(value), headers: headers)
    }

    /// A JSON answer from a `JSONSerialization` object (dictionaries, arrays, strings, numbers, NSNull).
    public static func json(status: Int, jsonObject: Any, headers: HTTPHeaders = [:]) throws -> HTTPResponse {
        guard JSONSerialization.isValidJSONObject(jsonObject) else {
            throw CocoaError(.propertyListWriteInvalid)
        }
        let data = try JSONSerialization.data(withJSONObject: jsonObject, options: [.sortedKeys])
        return json(status: status, data, headers: headers)
    }

    /// A plain-text answer, `Content-Type: text/plain; charset=utf-8`.
    public static func text(status: Int, _ text: String, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var headers = headers
        headers.replaceOrAdd(name: WireHeader.contentType, value: "text/plain; charset=utf-8")
        return HTTPResponse(status: status, headers: headers, body: Array(text.utf8))
    }

    /// The server's own error answers (malformed request, timeout, overload): the wire's error body
    /// `{"errorCode": CODE, "message": text}` (docs/ARCHITECTURE.md, "Wire contract"), so that
    /// clients classify them like the backend's: 400 is `MALFORMED_REQUEST`, the other statuses
    /// the server answers have an `HTTP_…` code of their own (``serverErrorCode(status:)``).
    static func serverError(status: Int, reason: String) -> HTTPResponse {
        let body =
            "{\"\(WireErrorCode.Member.errorCode)\":\"\(serverErrorCode(status: status).rawValue)\","
            + "\"\(WireErrorCode.Member.message)\":\"\(jsonEscaped(reason))\"}"
        return HTTPResponse(
            status: status, headers: [WireHeader.contentType: WireMediaType.json], body: Array(body.utf8))
    }

    /// The code of the server's own answer with `status`: one of the statuses the server answers
    /// with itself, else `MALFORMED_REQUEST` for a 4xx and `HTTP_INTERNAL_SERVER_ERROR` for a 5xx.
    static func serverErrorCode(status: Int) -> WireErrorCode {
        switch status {
        case 408: .httpRequestTimeout
        case 411: .httpLengthRequired
        case 413: .httpContentTooLarge
        case 414: .httpURITooLong
        case 431: .httpHeaderFieldsTooLarge
        case 503: .httpServiceUnavailable
        case 505: .httpVersionNotSupported
        case 500...: .httpInternalServerError
        default: .malformedRequest
        }
    }

    private static func jsonEscaped(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

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

    /// The server's own error answers (malformed request, timeout, overload): a JSON body with a
    /// stable `errorCode` such as `HTTP_BAD_REQUEST`, so clients can classify them like backend errors.
    static func serverError(status: Int, reason: String) -> HTTPResponse {
        let phrase = HTTPStatusReason.phrase(for: status)
        let code =
            "HTTP_"
            + (phrase.isEmpty
                ? String(status)
                : phrase.uppercased()
                    .replacingOccurrences(of: " ", with: "_").replacingOccurrences(of: "-", with: "_"))
        let body = "{\"errorCode\":\"\(code)\",\"reason\":\"\(jsonEscaped(reason))\"}"
        return HTTPResponse(
            status: status, headers: [WireHeader.contentType: WireMediaType.json], body: Array(body.utf8))
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

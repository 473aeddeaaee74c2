import FetchChannelWire

/// Turns an `HTTPResponse` into wire bytes, adding the fields the server owns.
///
/// The server, not the handler, frames every answer: `Content-Length` is always computed from the
/// body (a handler's `Content-Length`/`Transfer-Encoding` is dropped), `Connection` reflects what the
/// server will really do, and `Date` is added from the configured clock unless the handler set one.
/// An answer the handler could not legally send (1xx status, a field name that is not a token, CR/LF
/// in a value, which would split the response) becomes a 500 instead of reaching the wire.
enum HTTPResponseSerializer {
    enum ConnectionField {
        /// No `Connection` field: HTTP/1.1 persistence is the default.
        case none
        case close
        /// For HTTP/1.0 clients that asked to keep the connection.
        case keepAlive
    }

    private static let serverOwnedFields = [
        WireHeader.contentLength, WireHeader.transferEncoding, WireHeader.connection,
    ]

    /// - Parameters:
    ///   - omitBody: true for an answer to HEAD: the head announces the length, no body follows.
    ///   - contentLengthSurplus: announced bytes that will never be sent (`respondThenHang`). An
    ///     answer that owes no body (to HEAD, or a 204 or 304) would be complete all the same, and
    ///     the client's next request on the connection would go unread; its head is left
    ///     unfinished instead, without the blank line that ends it.
    static func serialize(
        _ response: HTTPResponse,
        dateMillis: Int64,
        omitBody: Bool,
        connection: ConnectionField,
        contentLengthSurplus: Int = 0
    ) -> [UInt8] {
        var response = response
        if let problem = problem(with: response) {
            response = HTTPResponse.serverError(
                status: 500, reason: "the handler produced an invalid answer: \(problem)")
        }
        // RFC 9110 §8.6 and §6.4.1: 204 and 304 have no content and 204 no Content-Length.
        let hasContent = response.status != 204 && response.status != 304

        var head = "HTTP/1.1 \(response.status) \(response.reasonPhrase)\r\n"
        if !response.headers.contains(WireHeader.date) {
            head += "\(WireHeader.date): \(HTTPServerDate.imfFixdate(epochMillis: dateMillis))\r\n"
        }
        for field in response.headers
        where !serverOwnedFields.contains(where: { HTTPHeaders.namesEqual($0, field.name) }) {
            head += "\(field.name): \(field.value)\r\n"
        }
        if hasContent {
            head += "\(WireHeader.contentLength): \(response.body.count + contentLengthSurplus)\r\n"
        }
        switch connection {
        case .none: break
        case .close: head += "\(WireHeader.connection): close\r\n"
        case .keepAlive: head += "\(WireHeader.connection): keep-alive\r\n"
        }
        let owesBody = hasContent && !omitBody
        if owesBody || contentLengthSurplus == 0 { head += "\r\n" }

        var bytes = Array(head.utf8)
        if owesBody {
            bytes.append(contentsOf: response.body)
        }
        return bytes
    }

    /// Whether the handler asked, with `Connection: close`, for the connection to end after this answer.
    static func asksToClose(_ response: HTTPResponse) -> Bool {
        response.headers.containsToken("close", inField: WireHeader.connection)
    }

    private static func problem(with response: HTTPResponse) -> String? {
        guard (200...999).contains(response.status) else {
            return "status \(response.status) is not a final status code (200...999)"
        }
        for field in response.headers {
            guard HTTPSyntax.isToken(field.name) else {
                return "field name \"\(field.name)\" is not a token"
            }
            guard HTTPSyntax.isFieldValue(field.value) else {
                return "the value of \(field.name) contains CR, LF or another control character"
            }
        }
        return nil
    }
}

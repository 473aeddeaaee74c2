import FetchChannelWire

/// How the body of a request is delimited (RFC 9112 §6), decided from its head alone: a
/// Content-Length the parser then reads, or why the length cannot be determined. See the rules in
/// ``HTTPRequestParser``'s documentation.
struct HTTPRequestFraming: Equatable {
    /// The body's length in bytes (0 without Content-Length).
    let length: Int
    /// Whether the client waits for `100 Continue` before sending the body (HTTP/1.1 only).
    let expectsContinue: Bool

    /// The body length of a request whose head is `headers`, or why it cannot be determined.
    static func decide(version: HTTPVersion, headers: HTTPHeaders, maxBodyBytes: Int)
        -> Result<HTTPRequestFraming, HTTPRequestParseError>
    {
        let hostCount = headers.values(for: WireHeader.host).count
        if version == .http1_1 && hostCount != 1 {
            return .failure(
                HTTPRequestParseError(400, "an HTTP/1.1 request needs exactly one Host field (found \(hostCount))"))
        }
        if hostCount > 1 {
            return .failure(HTTPRequestParseError(400, "more than one Host field"))
        }

        let contentLengthFields = headers.values(for: WireHeader.contentLength)
        let transferEncodings = headers.values(for: WireHeader.transferEncoding)
        if !transferEncodings.isEmpty {
            if version == .http1_0 {
                return .failure(HTTPRequestParseError(400, "Transfer-Encoding in an HTTP/1.0 request"))
            }
            if !contentLengthFields.isEmpty {
                return .failure(HTTPRequestParseError(400, "both Transfer-Encoding and Content-Length"))
            }
            let codings =
                transferEncodings
                .flatMap { $0.split(separator: ",") }
                .map { $0.trimmingHTTPWhitespace().lowercased() }
                .filter { !$0.isEmpty }
            if codings.last == "chunked" {
                return .failure(
                    HTTPRequestParseError(411, "chunked request bodies are not accepted; send Content-Length"))
            }
            return .failure(HTTPRequestParseError(400, "Transfer-Encoding without chunked as the final coding"))
        }

        var length = 0
        if !contentLengthFields.isEmpty {
            switch parseContentLength(contentLengthFields) {
            case .success(let value):
                length = value
            case .failure(let error):
                return .failure(error)
            }
        }
        if length > maxBodyBytes {
            return .failure(HTTPRequestParseError(413, "body of \(length) bytes exceeds \(maxBodyBytes)"))
        }
        // RFC 9110 §15.2: no interim answer to an HTTP/1.0 client.
        let expectsContinue =
            version == .http1_1 && length > 0 && headers.containsToken("100-continue", inField: WireHeader.expect)
        return .success(HTTPRequestFraming(length: length, expectsContinue: expectsContinue))
    }

    /// All members of all Content-Length fields must be the same 1*DIGIT value below 10^18.
    static func parseContentLength(_ fields: [String]) -> Result<Int, HTTPRequestParseError> {
        var agreed: Int?
        for field in fields {
            for member in field.split(separator: ",", omittingEmptySubsequences: false) {
                let digits = member.trimmingHTTPWhitespace().utf8
                guard !digits.isEmpty, digits.allSatisfy(HTTPSyntax.isDigit) else {
                    return .failure(HTTPRequestParseError(400, "Content-Length is not a non-negative integer"))
                }
                let significant = digits.drop { $0 == UInt8(ascii: "0") }
                guard significant.count <= 18 else {
                    return .failure(HTTPRequestParseError(400, "Content-Length is implausibly large"))
                }
                let value = significant.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
                if let agreed, agreed != value {
                    return .failure(HTTPRequestParseError(400, "conflicting Content-Length values"))
                }
                agreed = value
            }
        }
        guard let agreed else {
            return .failure(HTTPRequestParseError(400, "empty Content-Length"))
        }
        return .success(agreed)
    }
}

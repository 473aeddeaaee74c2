import FetchChannelWire

/// An incremental, strict HTTP/1.1 request parser (RFC 9112) with configurable limits.
///
/// Bytes are appended as they arrive; each complete line is examined once, so a client that
/// trickles bytes costs linear, not quadratic, work. Anything ambiguous is refused rather than
/// guessed, because a lenient reading is how request smuggling starts:
/// - lines end in CRLF; a bare LF or a CR anywhere else is 400;
/// - request line: `token SP target SP HTTP/d.d`, single spaces; a well-formed version of another
///   major than 1 is 505, a malformed one 400, and 1.2 or later is served as 1.1 (RFC 9110 §6.2:
///   the highest minor version implemented); a line over the limit is 414 when the target is what is
///   long, 400 otherwise; empty lines before a request line are skipped (RFC 9112 §2.2);
/// - targets: origin-form, absolute-form, or `*` with OPTIONS; visible ASCII without "#";
///   authority-form (CONNECT) is 400 because this server is no proxy;
/// - fields: token name directly followed by ":", no obs-fold (a line starting with SP/HTAB), no
///   control characters in values; more than `maxHeaderCount` lines or `maxHeaderBytes` is 431;
/// - HTTP/1.1 needs exactly one Host field (RFC 9112 §3.2), otherwise 400;
/// - framing (RFC 9112 §6): no chunked decoding is implemented. Transfer-Encoding together with
///   Content-Length, in an HTTP/1.0 request, or with a final coding other than chunked is 400
///   (§6.1 and §6.3 rule 4: the length cannot be determined, the server MUST answer 400). A
///   chunked body without Content-Length is 411 Length Required, which §6.3 allows a server that
///   wants a length; it tells a client what to do: resend with Content-Length.
/// - Content-Length: 1*DIGIT; repeated fields or list members must all be equal; otherwise, or
///   when it is signed, empty or 10^18 or more (beyond any sane integer), 400. Over `maxBodyBytes`
///   is 413, decided before the body is read.
struct HTTPRequestParser {
    enum Event {
        /// The buffered bytes do not hold a complete request yet.
        case needMore
        case request(HTTPRequest)
        /// The request is refused; the parser stays failed.
        case failure(HTTPRequestParseError)
    }

    private enum State {
        case requestLine
        case headerFields
        case body(length: Int)
        case failed(HTTPRequestParseError)
    }

    let limits: HTTPServer.Limits
    let peer: HTTPPeerAddress

    private var buffer: [UInt8] = []
    /// The buffer capacity kept between requests; a larger one is given back.
    static let keptCapacity = 64 * 1024
    /// The bytes the buffer holds allocated (for tests).
    var bufferCapacity: Int { buffer.capacity }
    /// Index of the first byte not consumed yet.
    private var start = 0
    /// Bytes after `start` already searched for LF without finding one.
    private var scanned = 0
    private var state = State.requestLine

    // The request being assembled.
    private var method = ""
    private var target = ""
    private var path = ""
    private var query: String?
    private var version = HTTPVersion.http1_1
    private var headers = HTTPHeaders()
    private var headerBytes = 0
    private var expectsContinue = false
    /// The unfinished request line already showed the space after its method.
    private var partialMethodEnded = false
    /// Empty lines read since the last request (or the connection's start). RFC 9112 §2.2 asks a
    /// server to ignore at least one before a request line; a stream of them is no request.
    private var emptyLinesBeforeRequest = 0
    static let maximumEmptyLinesBeforeRequest = 8

    init(limits: HTTPServer.Limits, peer: HTTPPeerAddress) {
        self.limits = limits
        self.peer = peer
    }

    /// True once any byte of the next request is buffered or consumed: the request deadline runs.
    var hasStartedRequest: Bool {
        if case .requestLine = state {
            return start < buffer.count
        }
        return true
    }

    /// True while the body of a request that sent `Expect: 100-continue` is awaited.
    var isAwaitingBodyAfterExpectContinue: Bool {
        if case .body = state {
            return expectsContinue
        }
        return false
    }

    mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        if start > 0 {
            // Drop consumed bytes; what remains is at most one partial request.
            buffer.removeSubrange(0..<start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    mutating func next() -> Event {
        while true {
            switch state {
            case .failed(let error):
                return .failure(error)

            case .requestLine:
                let uncheckedFrom = start + scanned
                let lineFeed = findLineFeed()
                if lineFeed == nil, let error = checkPartialMethod(from: uncheckedFrom) {
                    return fail(error)
                }
                // Too long once more than the limit plus CR precede the line feed (or are buffered
                // without one), judged on the same first bytes either way, so that the answer does
                // not depend on how the bytes were split into reads.
                if (lineFeed ?? buffer.count) - start > limits.maxRequestLineLength + 1 {
                    return fail(classifyLongRequestLine(buffer[start..<(start + limits.maxRequestLineLength + 1)]))
                }
                guard let lineFeed else {
                    return .needMore
                }
                guard let line = takeLine(endingAt: lineFeed) else {
                    return fail(HTTPRequestParseError(400, "request line does not end with CRLF"))
                }
                partialMethodEnded = false
                if line.isEmpty {
                    emptyLinesBeforeRequest += 1
                    guard emptyLinesBeforeRequest <= Self.maximumEmptyLinesBeforeRequest else {
                        return fail(HTTPRequestParseError(400, "empty lines instead of a request line"))
                    }
                    continue
                }
                emptyLinesBeforeRequest = 0
                if let error = parseRequestLine(line) {
                    return fail(error)
                }
                state = .headerFields

            case .headerFields:
                // The size limit is checked before anything else about a line, and the same way
                // whether its line feed has arrived or not, so that the answer does not depend on
                // where reads ended. The empty line that ends the head does not count.
                guard let lineFeed = findLineFeed() else {
                    // The unfinished line will be at least one byte (LF) longer than what is
                    // buffered, unless it is still a prefix of the final CRLF.
                    let pending = buffer.count - start
                    let mayEndHead = pending == 0 || (pending == 1 && buffer[start] == HTTPSyntax.carriageReturn)
                    if !mayEndHead && headerBytes + pending + 1 > limits.maxHeaderBytes {
                        return fail(HTTPRequestParseError(431, "header section exceeds \(limits.maxHeaderBytes) bytes"))
                    }
                    return .needMore
                }
                let lineLength = lineFeed + 1 - start
                let endsHead = lineLength == 2 && buffer[start] == HTTPSyntax.carriageReturn
                if !endsHead && headerBytes + lineLength > limits.maxHeaderBytes {
                    return fail(HTTPRequestParseError(431, "header section exceeds \(limits.maxHeaderBytes) bytes"))
                }
                guard let line = takeLine(endingAt: lineFeed) else {
                    return fail(HTTPRequestParseError(400, "header line does not end with CRLF"))
                }
                if line.isEmpty {
                    if let error = finishHead() {
                        return fail(error)
                    }
                    continue
                }
                headerBytes += lineLength
                if headers.count >= limits.maxHeaderCount {
                    return fail(HTTPRequestParseError(431, "more than \(limits.maxHeaderCount) header fields"))
                }
                if let error = parseFieldLine(line) {
                    return fail(error)
                }

            case .body(let length):
                guard buffer.count - start >= length else {
                    return .needMore
                }
                let body = Array(buffer[start..<(start + length)])
                start += length
                return .request(emit(body: body))
            }
        }
    }

    // MARK: - Lines

    /// Index of the next LF after `start`, searching only bytes not searched before.
    private mutating func findLineFeed() -> Int? {
        let from = start + scanned
        if let index = buffer[from...].firstIndex(of: HTTPSyntax.lineFeed) {
            scanned = 0
            return index
        }
        scanned = buffer.count - start
        return nil
    }

    /// Consumes the line up to and including the LF; nil if the LF is not preceded by CR.
    private mutating func takeLine(endingAt lineFeed: Int) -> ArraySlice<UInt8>? {
        guard lineFeed > start, buffer[lineFeed - 1] == HTTPSyntax.carriageReturn else {
            return nil
        }
        let line = buffer[start..<(lineFeed - 1)]
        start = lineFeed + 1
        return line
    }

    private mutating func fail(_ error: HTTPRequestParseError) -> Event {
        state = .failed(error)
        return .failure(error)
    }

    // MARK: - Request line

    /// Refuses an unfinished request line as soon as its method part holds a byte that is neither a
    /// token character nor the space after it, so that binary garbage without a line feed (a TLS
    /// hello, say) is answered 400 at once instead of waiting for the request timeout. Only bytes
    /// not examined before are looked at, and a CR that was the last byte last time.
    private mutating func checkPartialMethod(from index: Int) -> HTTPRequestParseError? {
        if partialMethodEnded {
            return nil  // The target and version are checked once the line is complete.
        }
        // A CR let through as the last byte (it may be the CR of a CRLF) is looked at again now
        // that bytes follow it: otherwise the answer would depend on where a read ended.
        let from = index > start && buffer[index - 1] == HTTPSyntax.carriageReturn ? index - 1 : index
        for position in from..<buffer.count {
            let byte = buffer[position]
            if byte == HTTPSyntax.space {
                partialMethodEnded = true
                return nil
            }
            let isTrailingCR = byte == HTTPSyntax.carriageReturn && position == buffer.count - 1
            if !HTTPSyntax.isTokenCharacter(byte) && !isTrailingCR {
                return HTTPRequestParseError(400, "this is not an HTTP/1.1 request line")
            }
        }
        return nil
    }

    /// 414 when a valid method is followed by a target that takes up most of `line` (the first
    /// `maxRequestLineLength + 1` bytes of an over-long request line; the target may not have ended
    /// there); 400 for any other over-long line.
    private func classifyLongRequestLine(_ line: ArraySlice<UInt8>) -> HTTPRequestParseError {
        let tooLong = HTTPRequestParseError(400, "request line exceeds \(limits.maxRequestLineLength) bytes")
        guard let firstSpace = line.firstIndex(of: HTTPSyntax.space),
            HTTPSyntax.isToken(line[line.startIndex..<firstSpace])
        else {
            return tooLong
        }
        let targetStart = firstSpace + 1
        let targetEnd = line[targetStart...].firstIndex(of: HTTPSyntax.space) ?? line.endIndex
        let targetLength = targetEnd - targetStart
        if targetLength > line.count - targetLength {
            return HTTPRequestParseError(
                414, "request target exceeds the \(limits.maxRequestLineLength)-byte request line limit")
        }
        return tooLong
    }

    private mutating func parseRequestLine(_ line: ArraySlice<UInt8>) -> HTTPRequestParseError? {
        guard let firstSpace = line.firstIndex(of: HTTPSyntax.space) else {
            return HTTPRequestParseError(400, "request line has no request target")
        }
        let methodBytes = line[line.startIndex..<firstSpace]
        guard HTTPSyntax.isToken(methodBytes) else {
            return HTTPRequestParseError(400, "method is not a token")
        }
        let targetStart = firstSpace + 1
        guard let secondSpace = line[targetStart...].firstIndex(of: HTTPSyntax.space) else {
            return HTTPRequestParseError(400, "request line has no HTTP version")
        }
        let targetBytes = line[targetStart..<secondSpace]
        let versionBytes = line[(secondSpace + 1)...]
        guard let parsedVersion = HTTPRequestParser.parseVersion(versionBytes) else {
            return HTTPRequestParseError(400, "malformed HTTP version")
        }
        guard !targetBytes.isEmpty,
            targetBytes.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E && $0 != UInt8(ascii: "#") })
        else {
            return HTTPRequestParseError(400, "request target is empty or contains a byte outside visible ASCII")
        }
        // A higher minor version of HTTP/1 is served as 1.1, the highest this server implements
        // (RFC 9110 §6.2); another major version is not HTTP/1's syntax at all.
        guard parsedVersion.major == 1 else {
            return HTTPRequestParseError(505, "\(parsedVersion) is not supported; use HTTP/1.1")
        }
        method = String(decoding: methodBytes, as: UTF8.self)
        target = String(decoding: targetBytes, as: UTF8.self)
        version = parsedVersion.minor == 0 ? .http1_0 : .http1_1
        guard let split = HTTPRequestParser.splitTarget(target, method: method) else {
            return HTTPRequestParseError(400, "unsupported request-target form")
        }
        path = split.path
        query = split.query
        return nil
    }

    /// `HTTP/` DIGIT `.` DIGIT, case-sensitive (RFC 9112 §2.3).
    static func parseVersion(_ bytes: ArraySlice<UInt8>) -> HTTPVersion? {
        let expected: [UInt8] = Array("HTTP/".utf8)
        guard bytes.count == 8, bytes.prefix(5).elementsEqual(expected) else { return nil }
        let major = bytes[bytes.startIndex + 5]
        let dot = bytes[bytes.startIndex + 6]
        let minor = bytes[bytes.startIndex + 7]
        guard HTTPSyntax.isDigit(major), dot == UInt8(ascii: "."), HTTPSyntax.isDigit(minor) else { return nil }
        return HTTPVersion(major: Int(major - UInt8(ascii: "0")), minor: Int(minor - UInt8(ascii: "0")))
    }

    /// Path and query of an origin-form, absolute-form or asterisk-form target; nil for other forms.
    static func splitTarget(_ target: String, method: String) -> (path: String, query: String?)? {
        func splitQuery(_ text: Substring) -> (path: String, query: String?) {
            if let question = text.firstIndex(of: "?") {
                return (String(text[..<question]), String(text[text.index(after: question)...]))
            }
            return (String(text), nil)
        }
        if target.hasPrefix("/") {
            return splitQuery(target[...])
        }
        if target == "*" {
            return method == "OPTIONS" ? ("*", nil) : nil
        }
        // absolute-form: scheme "://" authority path-abempty [ "?" query ]
        guard let schemeEnd = target.range(of: "://") else { return nil }
        let scheme = target[..<schemeEnd.lowerBound]
        guard let first = scheme.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII,
            scheme.unicodeScalars.allSatisfy({
                $0.isASCII
                    && ($0.properties.isAlphabetic
                        || ("0"..."9").contains($0) || $0 == "+" || $0 == "-" || $0 == ".")
            })
        else {
            return nil
        }
        let afterScheme = target[schemeEnd.upperBound...]
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" } ?? afterScheme.endIndex
        guard authorityEnd > afterScheme.startIndex else { return nil }
        let rest = afterScheme[authorityEnd...]
        let split = splitQuery(rest)
        return (split.path.isEmpty ? "/" : split.path, split.query)
    }

    // MARK: - Header fields

    private mutating func parseFieldLine(_ line: ArraySlice<UInt8>) -> HTTPRequestParseError? {
        guard let first = line.first, !HTTPSyntax.isWhitespace(first) else {
            return HTTPRequestParseError(400, "line folding (obs-fold) or whitespace before a field name")
        }
        guard let colon = line.firstIndex(of: HTTPSyntax.colon) else {
            return HTTPRequestParseError(400, "header line without a colon")
        }
        let name = line[line.startIndex..<colon]
        if let last = name.last, HTTPSyntax.isWhitespace(last) {
            return HTTPRequestParseError(400, "whitespace between a field name and its colon")
        }
        guard HTTPSyntax.isToken(name) else {
            return HTTPRequestParseError(400, "field name is not a token")
        }
        var value = line[(colon + 1)...]
        while let head = value.first, HTTPSyntax.isWhitespace(head) { value.removeFirst() }
        while let tail = value.last, HTTPSyntax.isWhitespace(tail) { value.removeLast() }
        guard value.allSatisfy(HTTPSyntax.isFieldValueCharacter) else {
            return HTTPRequestParseError(400, "control character (CR, NUL, ...) in a field value")
        }
        headers.add(name: String(decoding: name, as: UTF8.self), value: HTTPSyntax.decodeFieldBytes(value))
        return nil
    }

    // MARK: - Framing

    private mutating func finishHead() -> HTTPRequestParseError? {
        switch HTTPRequestFraming.decide(version: version, headers: headers, maxBodyBytes: limits.maxBodyBytes) {
        case .success(let framing):
            expectsContinue = framing.expectsContinue
            state = .body(length: framing.length)
            return nil
        case .failure(let error):
            return error
        }
    }

    /// Hands out the finished request and resets for the next one on the same connection.
    private mutating func emit(body: [UInt8]) -> HTTPRequest {
        let request = HTTPRequest(
            method: method, target: target, path: path, query: query, version: version,
            headers: headers, body: body, peer: peer)
        state = .requestLine
        scanned = 0
        method = ""
        target = ""
        path = ""
        query = nil
        version = .http1_1
        headers = HTTPHeaders()
        headerBytes = 0
        expectsContinue = false
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= Self.keptCapacity)
            start = 0
        } else if buffer.capacity > Self.keptCapacity && buffer.count - start <= Self.keptCapacity {
            // A little more followed a large request (a pipelined start, a stray CRLF): keep only
            // that, so an idle connection does not hold the large request's buffer.
            buffer = Array(buffer[start...])
            start = 0
        }
        return request
    }
}

// Fuzz target `http-request`: the emulator's incremental HTTP/1.1 request parser.
//
// Input: bytes as a client would send them on one connection. The parser is fed the input whole,
// one byte at a time, and in random chunks (split points from a hash of the input), with small
// limits so that every limit is reachable. Checks, besides "no crash":
// - every feeding gives the same events: the same requests in the same order, then the same end
//   (still waiting for bytes, or the same refusal status);
// - refusals use the documented statuses; requests respect the limits and the grammar.

@testable import FetchChannelEmulator

private let limits = HTTPServer.Limits(maxRequestLineLength: 128, maxHeaderCount: 8, maxHeaderBytes: 256, maxBodyBytes: 64)
private let peer = HTTPPeerAddress(host: "127.0.0.1", port: 1)
private let refusalStatuses: Set<Int> = [400, 411, 413, 414, 431, 505]

private enum Outcome: Equatable, CustomStringConvertible {
    case request(HTTPRequest)
    case needMore
    case failure(status: Int)

    var description: String {
        switch self {
        case .request(let request): "request \(request.method) \(request.target) (\(request.headers.count) fields, \(request.body.count) body bytes)"
        case .needMore: "needMore"
        case .failure(let status): "failure \(status)"
        }
    }
}

/// Feeds `bytes` in the given chunks, draining events after each chunk; the last event is the end.
private func parse(_ bytes: [UInt8], chunkEnds: [Int]) -> [Outcome] {
    var parser = HTTPRequestParser(limits: limits, peer: peer)
    var outcomes: [Outcome] = []
    var offset = 0
    for end in chunkEnds + [bytes.count] where end > offset {
        parser.append(bytes[offset..<end])
        offset = end
        drain: while true {
            switch parser.next() {
            case .needMore:
                break drain
            case .request(let request):
                check(request)
                outcomes.append(.request(request))
            case .failure(let error):
                fuzzCheck(refusalStatuses.contains(error.status), "refused with status \(error.status)")
                fuzzCheck(!error.reason.isEmpty, "refused without a reason")
                // A failed parser stays failed.
                if case .failure(let again) = parser.next() {
                    fuzzCheck(again == error, "the parser changed its refusal")
                } else {
                    fuzzCheck(false, "the parser recovered after a refusal")
                }
                outcomes.append(.failure(status: error.status))
                return outcomes
            }
        }
    }
    outcomes.append(.needMore)
    return outcomes
}

private func check(_ request: HTTPRequest) {
    fuzzCheck(HTTPSyntax.isToken(request.method), "method \(request.method.debugDescription) is not a token")
    fuzzCheck(!request.target.isEmpty && request.target.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E && $0 != UInt8(ascii: "#") },
              "target \(request.target.debugDescription)")
    fuzzCheck(request.version == .http1_1 || request.version == .http1_0, "version \(request.version)")
    fuzzCheck(request.body.count <= limits.maxBodyBytes, "body of \(request.body.count) bytes")
    fuzzCheck(request.headers.count <= limits.maxHeaderCount, "\(request.headers.count) header fields")
    fuzzCheck(request.version == .http1_0 || request.headers.values(for: "Host").count == 1, "HTTP/1.1 without exactly one Host")
    fuzzCheck(!request.headers.contains("Transfer-Encoding"), "accepted Transfer-Encoding")
    for field in request.headers {
        fuzzCheck(HTTPSyntax.isToken(field.name), "field name \(field.name.debugDescription)")
        fuzzCheck(!field.value.unicodeScalars.contains { $0 == "\r" || $0 == "\n" || $0 == "\0" }, "control character in a field value")
    }
    let lengths = request.headers.values(for: "Content-Length")
    if lengths.isEmpty {
        fuzzCheck(request.body.isEmpty, "a body without Content-Length")
    } else if case .success(let length) = HTTPRequestFraming.parseContentLength(lengths) {
        fuzzCheck(length == request.body.count, "Content-Length \(length) but \(request.body.count) body bytes")
    } else {
        fuzzCheck(false, "accepted an invalid Content-Length")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPRequest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let whole = parse(bytes, chunkEnds: [])

    var random = FuzzRandom(hashing: bytes)
    var ends: [Int] = []
    var position = 0
    while position < bytes.count {
        position += Int.random(in: 1...max(1, min(48, bytes.count / 2)), using: &random)
        ends.append(min(position, bytes.count))
    }
    let chunked = parse(bytes, chunkEnds: ends)
    fuzzCheck(chunked == whole, "chunks \(ends) give \(chunked), whole input gives \(whole)")

    if bytes.count <= 1024 {
        let byByte = parse(bytes, chunkEnds: Array(0..<bytes.count))
        fuzzCheck(byByte == whole, "byte by byte gives \(byByte), whole input gives \(whole)")
    }
    return 0
}

func fuzzWarmUp() {
    _ = (limits, peer, refusalStatuses)
    fuzzRun(fuzzHTTPRequest, Array("POST /p?q HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nokGET / HTTP/1.0\r\n\r\nX".utf8))
}

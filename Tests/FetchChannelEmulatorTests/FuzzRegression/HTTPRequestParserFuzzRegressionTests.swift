import Foundation
import Testing

@testable import FetchChannelEmulator

/// Inputs found by the `http-request` fuzz target (scripts/fuzz.sh), kept as regression tests.
///
/// The target feeds one input to the parser whole, byte by byte and in random chunks, and requires
/// the same requests and the same final answer each way: how TCP splits a request into reads must
/// not change what the server answers.
extension HTTPServerTests {
    @Suite struct RequestParserFuzzRegressionTests {
        /// The fuzz target's limits.
        static let limits = HTTPServer.Limits(
            maxRequestLineLength: 128, maxHeaderCount: 8, maxHeaderBytes: 256, maxBodyBytes: 64)

        /// Feeds `bytes` in chunks ending at `chunkEnds` (then the rest); the status of the refusal,
        /// or nil if the parser is still waiting for bytes. Requests before the refusal are counted.
        static func refusal(_ bytes: [UInt8], chunkEnds: [Int]) -> (requests: Int, status: Int?) {
            var parser = HTTPRequestParser(limits: limits, peer: HTTPPeerAddress(host: "127.0.0.1", port: 1))
            var requests = 0
            var offset = 0
            for end in chunkEnds + [bytes.count] where end > offset {
                parser.append(bytes[offset..<end])
                offset = end
                while true {
                    switch parser.next() {
                    case .needMore: break
                    case .request:
                        requests += 1
                        continue
                    case .failure(let error): return (requests, error.status)
                    }
                    break
                }
            }
            return (requests, nil)
        }

        /// An over-long request line that ends in a bare LF was 400 ("does not end with CRLF") when
        /// the LF arrived with the rest of the line, and 414 when the first 130 bytes arrived first.
        /// Crash input `crash-2fa4dfef…` (fuzz target http-request, 2026-11-30).
        @Test func overLongRequestLineGetsOneAnswerHoweverItIsSplit() {
            let input =
                Array("POST /".utf8) + [UInt8](repeating: 0x85, count: 117)
                + Array("nevisfido/t\nExpect: 100-continue\r\n\r\n{\"token\":\"t\"}GET /again HTTP/1.\r\n".utf8)
            let whole = Self.refusal(input, chunkEnds: [])
            #expect(whole.requests == 0 && whole.status == 414)
            let found = Self.refusal(input, chunkEnds: [21, 33, 51, 97, 108, 132, 180, 192])
            #expect(found.requests == whole.requests && found.status == whole.status)
            let byByte = Self.refusal(input, chunkEnds: Array(0..<input.count))
            #expect(byByte.requests == whole.requests && byByte.status == whole.status)
        }

        /// A CR inside an unfinished method was refused at once when the bytes after it arrived
        /// with it, but let through for good when it was the last byte of a read (as the possible
        /// CR of a CRLF) and never looked at again: the connection then waited for the request
        /// timeout instead of getting its 400. Crash input `crash-6c0d7be5…` (2026-11-30).
        @Test func crInsideAnUnfinishedMethodIsRefusedHoweverItIsSplit() {
            let input = Array("EE\r--v\r".utf8)
            let whole = Self.refusal(input, chunkEnds: [])
            #expect(whole.requests == 0 && whole.status == 400)
            for split in 1..<input.count {
                let outcome = Self.refusal(input, chunkEnds: [split])
                #expect(outcome.requests == 0 && outcome.status == 400, "split after \(split) bytes")
            }
            let byByte = Self.refusal(input, chunkEnds: Array(0..<input.count))
            #expect(byByte.requests == 0 && byByte.status == 400)
            // A CR that does end the line is still fine, however the CRLF is split.
            let request = Array("GET / HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
            for split in 1..<request.count {
                let outcome = Self.refusal(request, chunkEnds: [split])
                #expect(outcome.requests == 1 && outcome.status == nil, "split after \(split) bytes")
            }
        }

        /// An over-long header line ending in a bare LF was 400 ("does not end with CRLF") when its
        /// LF arrived with it, and 431 when the limit was crossed before the LF arrived.
        /// Crash input `crash-2bcd79a4…` (2026-11-30), then the same with readable bytes.
        @Test func overLongHeaderLineGetsOneAnswerHoweverItIsSplit() throws {
            let found = try #require(
                Data(
                    base64Encoded: """
                        UE9TVCAvIEhUVFAvMS4xDQpIb3N0OiBhDQogICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICBDb///////\
                        //////////////////////+AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICA\
                        gICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgID/////////////////////////////////////////////\
                        //////////////////////////////////////////////////////////////////////////////////////////9udGU6\
                        IGENAAAAAApDb250ZW50LUxlbmd0aDogUE9TVCAvIEhUVFAvMi4xDQpIb3N0OjINCm5ndGg6IDIsYDAyIGENClRyYW5zZmVy\
                        LUVuY29kaW5nOiBnemlwLCBDaHVuDQprZQ0=
                        """))
            let readable = Array("GET / HTTP/1.1\r\nHost: a\r\nX: \(String(repeating: "v", count: 300))\n\r\n".utf8)
            for input in [Array(found), readable] {
                let whole = Self.refusal(input, chunkEnds: [])
                #expect(whole.requests == 0 && whole.status == 431)
                for ends in [
                    [31, 62, 101, 113, 136, 137, 182, 206, 221, 255, 285, 296, 337, 374], Array(0..<input.count),
                ] {
                    let outcome = Self.refusal(input, chunkEnds: ends)
                    #expect(outcome.requests == 0 && outcome.status == 431)
                }
            }
        }

        /// Field lines of exactly `maxHeaderBytes` in all are within the limit; they were refused
        /// with 431 when a read ended right after the last field line or inside the final CRLF,
        /// because the unfinished empty line was counted as a field line to come.
        @Test func headAtExactlyTheLimitIsAcceptedHoweverItIsSplit() {
            let fields = "Host: a\r\nX: \(String(repeating: "v", count: Self.limits.maxHeaderBytes - 14))\r\n"
            #expect(fields.utf8.count == Self.limits.maxHeaderBytes)
            let requestLine = "GET / HTTP/1.1\r\n"
            let input = Array((requestLine + fields + "\r\n").utf8)
            for split in [
                0, requestLine.utf8.count + fields.utf8.count, requestLine.utf8.count + fields.utf8.count + 1,
            ] {
                let outcome = Self.refusal(input, chunkEnds: split == 0 ? [] : [split])
                #expect(outcome.requests == 1 && outcome.status == nil, "split after \(split) bytes")
            }
            let byByte = Self.refusal(input, chunkEnds: Array(0..<input.count))
            #expect(byByte.requests == 1 && byByte.status == nil)
            // One byte more is 431, however it is split.
            let over = Array(
                (requestLine + "Host: a\r\nX: \(String(repeating: "v", count: Self.limits.maxHeaderBytes - 13))\r\n\r\n")
                    .utf8)
            for ends in [[], [over.count - 2], [over.count - 1], Array(0..<over.count)] {
                #expect(Self.refusal(over, chunkEnds: ends).status == 431, "chunk ends \(ends)")
            }
        }

        /// The same rule for a well-formed CRLF: the classification reads the same first bytes
        /// whether the rest of the line (here, a long version part) has arrived or not.
        @Test func longLineClassificationDoesNotDependOnWhatFollows() {
            for (target, rest, status) in [(100, 200, 414), (20, 200, 400)] {
                let input = Array(
                    ("GET /" + String(repeating: "a", count: target) + " HTTP/1.1"
                        + String(repeating: "x", count: rest) + "\r\nHost: a\r\n\r\n").utf8)
                for split in [0, 130, 131, 140, 200] where split < input.count {
                    let outcome = Self.refusal(input, chunkEnds: split == 0 ? [] : [split])
                    #expect(outcome.requests == 0 && outcome.status == status, "target \(target), split at \(split)")
                }
            }
        }
    }
}

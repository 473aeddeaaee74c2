import DeviceSigning
import Testing

@testable import FetchChannelEmulator

/// The HTTP tests' seeded generator: a failing input reproduces from its seed.
typealias HTTPTestRandom = SplitMix64

extension SplitMix64 {
    /// Bytes biased toward the ones HTTP parsing branches on.
    mutating func httpishBytes(count: Int) -> [UInt8] {
        let interesting: [UInt8] =
            Array("\r\n :\t/?#-,0123456789HTTPGETPOSTContent-LengthHostTransfer-Encodingchunked".utf8) + [
                0, 0x7F, 0x80, 0xFF,
            ]
        return (0..<count).map { _ in
            Bool.random(using: &self)
                ? interesting.randomElement(using: &self) ?? 0 : UInt8.random(in: 0...255, using: &self)
        }
    }
}

extension HTTPServerTests {
    @Suite struct RequestParserFuzzTests {
        static let limits = HTTPServer.Limits(
            maxRequestLineLength: 128, maxHeaderCount: 8, maxHeaderBytes: 256, maxBodyBytes: 64)
        static let refusalStatuses: Set<Int> = [400, 411, 413, 414, 431, 505]
        static let seeds: [UInt64] = [1, 2, 3, 4]

        /// Feeds `bytes` in random chunks; checks whatever comes out against the parser's promises.
        private static func check(_ bytes: [UInt8], random: inout HTTPTestRandom, seed: UInt64, iteration: Int) {
            var parser = HTTPRequestParser(limits: limits, peer: HTTPPeerAddress(host: "127.0.0.1", port: 1))
            var offset = 0
            var requests = 0
            while requests < 100 {
                switch parser.next() {
                case .needMore:
                    guard offset < bytes.count else { return }
                    let end = min(bytes.count, offset + Int.random(in: 1...64, using: &random))
                    parser.append(bytes[offset..<end])
                    offset = end
                case .failure(let error):
                    #expect(refusalStatuses.contains(error.status), "seed \(seed) #\(iteration): \(error)")
                    return
                case .request(let request):
                    requests += 1
                    #expect(HTTPSyntax.isToken(request.method), "seed \(seed) #\(iteration)")
                    #expect(request.body.count <= limits.maxBodyBytes, "seed \(seed) #\(iteration)")
                    #expect(request.headers.count <= limits.maxHeaderCount, "seed \(seed) #\(iteration)")
                    for field in request.headers {
                        #expect(
                            HTTPSyntax.isToken(field.name) && !field.value.contains("\r")
                                && !field.value.contains("\n"),
                            "seed \(seed) #\(iteration)")
                    }
                    let declared =
                        request.headers["Content-Length"].flatMap { Int($0[...].trimmingHTTPWhitespace()) }
                        ?? request.body.count
                    #expect(
                        declared == request.body.count || request.headers["Content-Length"]?.contains(",") == true,
                        "seed \(seed) #\(iteration)")
                }
            }
        }

        @Test(arguments: seeds)
        func randomBytesAreRefusedOrParsedNeverCrash(seed: UInt64) {
            var random = HTTPTestRandom(seed: seed)
            for iteration in 0..<1_500 {
                let bytes = random.httpishBytes(count: Int.random(in: 0...400, using: &random))
                Self.check(bytes, random: &random, seed: seed, iteration: iteration)
            }
        }

        @Test(arguments: seeds)
        func mutatedValidRequestsAreRefusedOrParsedNeverCrash(seed: UInt64) {
            let valid = Array(
                ("POST /p?q=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nX-Y: z\r\n\r\nhello"
                    + "GET / HTTP/1.1\r\nHost: b\r\n\r\n").utf8)
            var random = HTTPTestRandom(seed: seed)
            for iteration in 0..<1_500 {
                var bytes = valid
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let position = Int.random(in: 0..<bytes.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: bytes[position] = random.httpishBytes(count: 1)[0]
                    case 1:
                        bytes.insert(
                            contentsOf: random.httpishBytes(count: Int.random(in: 1...8, using: &random)), at: position)
                    default: bytes.remove(at: position)
                    }
                    if bytes.isEmpty { bytes = [0] }
                }
                Self.check(bytes, random: &random, seed: seed, iteration: iteration)
            }
        }
    }
}

import FetchChannelWire
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal blocking HTTP/1.1 keep-alive client for loopback benchmarks: no URLSession, so the
/// numbers measure the server and not the client stack.
package final class LoopbackHTTPClient {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    /// The body of the last answer.
    package private(set) var lastBody: [UInt8] = []

    package init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw BenchmarkError("socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw BenchmarkError("connect() to 127.0.0.1:\(port) failed: errno \(errno)")
        }
        var one: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        // A backend that stops answering ends the round trip (a failed request) within 30 s,
        // rather than hold a load thread until the run's 10-minute bound.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        guard setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size)) == 0
        else {
            close(descriptor)
            throw BenchmarkError("setsockopt(SO_RCVTIMEO) failed: errno \(errno)")
        }
    }

    /// The bytes of a signed pending-operations request for `deviceId` at the default path.
    package static func operationsRequest(deviceId: String, signature: String) -> [UInt8] {
        let path = FetchPaths.default.pendingOperationsPath(deviceId: deviceId)
        return Array(
            ("GET \(path) HTTP/1.1\r\n\(WireHeader.host): 127.0.0.1\r\n"
                + "\(WireHeader.deviceSignature): \(signature)\r\n\r\n").utf8)
    }

    deinit {
        close(descriptor)
    }

    /// Sends a request and returns the status of its answer (the body is kept in `lastBody`).
    package func roundTrip(_ request: [UInt8]) throws -> Int {
        var sent = 0
        while sent < request.count {
            let written = request[sent...].withUnsafeBytes {
                send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { throw BenchmarkError("send() failed: errno \(errno)") }
            sent += written
        }
        while true {
            if let (status, headLength, length) = parsedAnswer() {
                lastBody = Array(buffer[headLength..<length])
                buffer.removeFirst(length)
                return status
            }
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let received = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard received > 0 else { throw BenchmarkError("the server closed the connection") }
            buffer.append(contentsOf: chunk[0..<received])
        }
    }

    /// (status, head length, total length) once a whole answer with Content-Length is buffered.
    private func parsedAnswer() -> (Int, Int, Int)? {
        let terminator: [UInt8] = [13, 10, 13, 10]
        guard buffer.count >= 12, let headEnd = buffer.firstRange(of: terminator)?.upperBound else { return nil }
        let head = String(decoding: buffer[0..<headEnd], as: UTF8.self)
        guard let status = Int(head.dropFirst(9).prefix(3)) else { return nil }
        var length = 0
        for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
            length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        return buffer.count >= headEnd + length ? (status, headEnd, headEnd + length) : nil
    }
}

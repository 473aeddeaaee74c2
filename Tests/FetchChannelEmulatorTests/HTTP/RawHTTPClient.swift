import FetchChannelEmulator
import Foundation
import Glibc

/// A raw TCP client for tests: sends exactly the bytes a test wants (malformed ones included) and
/// reads answers with deadlines, so that every wait is bounded and driven by socket events.
final class RawHTTPClient {
    enum ClientError: Error, Equatable {
        case connectFailed(Int32)
        case sendFailed(Int32)
        case timedOut
        /// The server closed (EOF) or reset the connection before a complete answer.
        case closed
        case malformedResponse(String)
    }

    /// How a wait for the end of the connection ended.
    enum CloseOutcome: Equatable {
        /// EOF or reset: the server closed the connection.
        case closed
        case timedOut
    }

    let fd: Int32
    private var buffer: [UInt8] = []
    private var isClosed = false

    init(port: Int, host: String = "127.0.0.1") throws {
        let isV6 = host.contains(":")
        let descriptor = socket(
            isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ClientError.connectFailed(errno) }
        fd = descriptor
        let result: Int32
        if isV6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else { throw ClientError.connectFailed(EINVAL) }
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw ClientError.connectFailed(EINVAL) }
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard result == 0 else { throw ClientError.connectFailed(errno) }
    }

    deinit {
        close()
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        _ = Glibc.close(fd)
    }

    // MARK: - Sending

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Sends all bytes; MSG_NOSIGNAL because the server may already have closed (EPIPE, not SIGPIPE).
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw ClientError.sendFailed(errno)
            }
            offset += count
        }
    }

    func shutdownWrite() {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    // MARK: - Receiving

    /// Appends what arrives before `deadline`; false on EOF or reset, throws on timeout.
    private func fill(deadline: ContinuousClock.Instant) throws -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw ClientError.timedOut }
            let millis = Int32(
                clamping: remaining.components.seconds * 1000
                    + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&descriptor, 1, millis)
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return true
            }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            return false  // 0 = EOF, or ECONNRESET
        }
    }

    /// Reads one answer framed by Content-Length (or, without it, up to the end of the connection).
    func readResponse(timeout: Duration = .seconds(10), isHeadRequest: Bool = false) throws -> RawHTTPResponse {
        let deadline = ContinuousClock.now + timeout
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            headEnd = buffer.firstRange(of: separator)?.upperBound
            if headEnd == nil {
                guard try fill(deadline: deadline) else { throw ClientError.closed }
            }
        }
        guard let headEnd else { throw ClientError.closed }
        let headText = String(decoding: buffer[0..<(headEnd - 4)], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw ClientError.malformedResponse(statusLine)
        }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw ClientError.malformedResponse(line) }
            headers.add(
                name: String(line[..<colon]),
                value: String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        buffer.removeFirst(headEnd)

        var body: [UInt8] = []
        let noBody = isHeadRequest || status == 204 || status == 304 || (100..<200).contains(status)
        if !noBody {
            if let lengthText = headers["Content-Length"] {
                guard let length = Int(lengthText) else {
                    throw ClientError.malformedResponse("Content-Length \(lengthText)")
                }
                while buffer.count < length {
                    guard try fill(deadline: deadline) else { throw ClientError.closed }
                }
                body = Array(buffer[0..<length])
                buffer.removeFirst(length)
            } else {
                while try fill(deadline: deadline) {}
                body = buffer
                buffer.removeAll()
            }
        }
        return RawHTTPResponse(
            status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers, body: body)
    }

    /// Sends a request and reads its answer.
    func roundTrip(_ request: String, timeout: Duration = .seconds(10)) throws -> RawHTTPResponse {
        try send(request)
        return try readResponse(timeout: timeout, isHeadRequest: request.hasPrefix("HEAD "))
    }

    /// Reads everything until the server closes; the bytes received (after any already buffered).
    func readUntilClose(timeout: Duration = .seconds(10)) throws -> [UInt8] {
        let deadline = ContinuousClock.now + timeout
        while try fill(deadline: deadline) {}
        defer { buffer.removeAll() }
        return buffer
    }

    /// Waits for EOF or reset, discarding any bytes; `.timedOut` if the connection stays open.
    func waitForClose(timeout: Duration = .seconds(10)) -> CloseOutcome {
        do {
            _ = try readUntilClose(timeout: timeout)
            return .closed
        } catch {
            return .timedOut
        }
    }

    /// Bytes received but not consumed by readResponse.
    var pendingBytes: [UInt8] { buffer }
}

/// An answer as read off the wire.
struct RawHTTPResponse {
    let status: Int
    let reason: String
    let headers: HTTPHeaders
    let body: [UInt8]

    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

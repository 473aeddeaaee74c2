import DeviceSigning
import FetchChannelTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback TCP server whose answers a test writes byte by byte: keep-alive, a redirect, a
/// body that never ends, silence. Listens on 127.0.0.1 port 0; one thread accepts, one thread per
/// connection runs the test's handler; ``stop()`` wakes and joins them all. It counts what it saw
/// (connections, requests, connections the client closed) so that a test can wait for an event
/// (``waitUntil(timeout:_:)``) instead of sleeping.
final class RawTestServer: Sendable {
    struct Counters: Sendable {
        var accepted = 0
        var requests = 0
        /// Connections on which the handler saw the client close (EOF or reset).
        var closedByClient = 0
        /// The head (request line and fields) of every request read, in order.
        var heads: [String] = []
    }

    let port: Int
    private let listener: Int32
    private let state = Locked(State())
    private let changed = NSCondition()
    private let threads = DispatchGroup()

    private struct State {
        var counters = Counters()
        var open: Set<Int32> = []
        var stopping = false
    }

    /// Starts listening; `handler` runs once per accepted connection, on that connection's thread.
    init(handler: @escaping @Sendable (RawTestConnection) -> Void) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw RawTestServerError(operation: "socket", errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, 64) == 0
                    && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            let failure = RawTestServerError(operation: "bind/listen", errno: errno)
            close(descriptor)
            throw failure
        }
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        threads.enter()
        Thread { [self] in
            acceptLoop(handler)
            threads.leave()
        }.start()
    }

    /// What the server saw so far.
    var counters: Counters { state.withLock { $0.counters } }

    /// Blocks until `condition` holds for the counters (true) or `timeout` passes (false).
    /// Woken by every change of a counter: no polling.
    func waitUntil(timeout: Duration = LooseTimeBounds.scaled(.seconds(10)), _ condition: (Counters) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(
            Double(timeout.components.seconds)
                + Double(timeout.components.attoseconds) / 1e18)
        changed.lock()
        defer { changed.unlock() }
        while !condition(counters) {
            guard changed.wait(until: deadline) else { return condition(counters) }
        }
        return true
    }

    /// Stops accepting, wakes every connection thread (their sockets are shut down) and waits
    /// for all threads to end.
    func stop() {
        let open = state.withLock { state -> Set<Int32> in
            state.stopping = true
            return state.open
        }
        shutdown(listener, Int32(SHUT_RDWR))
        for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)) }
        _ = threads.wait(timeout: .now() + 10)
        close(listener)
    }

    private func acceptLoop(_ handler: @escaping @Sendable (RawTestConnection) -> Void) {
        while true {
            let descriptor = accept(listener, nil, nil)
            if descriptor < 0 {
                if errno == EINTR { continue }
                return  // shut down by stop()
            }
            let admitted = state.withLock { state -> Bool in
                guard !state.stopping else { return false }
                state.open.insert(descriptor)
                state.counters.accepted += 1
                return true
            }
            guard admitted else {
                close(descriptor)
                return
            }
            signalChange()
            threads.enter()
            Thread { [self] in
                let connection = RawTestConnection(descriptor: descriptor, server: self)
                handler(connection)
                state.withLock { _ = $0.open.remove(descriptor) }
                close(descriptor)
                threads.leave()
            }.start()
        }
    }

    fileprivate func record(_ change: (inout Counters) -> Void) {
        state.withLock { change(&$0.counters) }
        signalChange()
    }

    private func signalChange() {
        changed.lock()
        changed.broadcast()
        changed.unlock()
    }
}

struct RawTestServerError: Error, CustomStringConvertible {
    let operation: String
    let errno: Int32
    var description: String { "\(operation) failed: \(String(cString: strerror(errno)))" }
}

/// One accepted connection, used only by its own thread (the handler's).
final class RawTestConnection: @unchecked Sendable {
    // @unchecked: used by the one connection thread only; `buffer` never leaves it.
    private let descriptor: Int32
    private unowned let server: RawTestServer
    private var buffer: [UInt8] = []

    fileprivate init(descriptor: Int32, server: RawTestServer) {
        self.descriptor = descriptor
        self.server = server
    }

    /// The next request's head (its body, by Content-Length, is read and dropped), or nil when
    /// the client closed the connection first.
    func readRequest() -> String? {
        while true {
            if let end = headEnd() {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                let bodyLength = Self.contentLength(of: head)
                while buffer.count < end + 4 + bodyLength {
                    guard receive() else { return closed() }
                }
                buffer.removeFirst(end + 4 + bodyLength)
                server.record {
                    $0.requests += 1
                    $0.heads.append(head)
                }
                return head
            }
            guard receive() else { return closed() }
        }
    }

    /// Sends all of `text`; false when the client is gone.
    @discardableResult
    func write(_ text: String) -> Bool {
        write(Array(text.utf8))
    }

    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Blocks until the client closes the connection (or the server stops); records it.
    func waitForClose() {
        while receive() { buffer.removeAll() }
        _ = closed()
    }

    private func receive() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            buffer.append(contentsOf: chunk[..<count])
            return true
        }
    }

    private func closed() -> String? {
        server.record { $0.closedByClient += 1 }
        return nil
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    private static func contentLength(of head: String) -> Int {
        for line in head.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" {
                return Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        return 0
    }
}

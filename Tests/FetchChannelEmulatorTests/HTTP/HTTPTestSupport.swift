import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelEmulator

/// All HTTP server tests run one after another: several measure time, count descriptors of the
/// whole process, or load both cores, and would disturb each other if run in parallel.
@Suite(.serialized, .dedicatedThread) struct HTTPServerTests {}

/// Shared helpers for the HTTP server tests.
enum HTTPTestSupport {
    /// Small timeouts so that tests finish fast; generous enough for a loaded 2-core machine.
    static func configuration(
        idleTimeout: Duration = .seconds(10),
        requestTimeout: Duration = .seconds(10),
        maxConnections: Int = 64,
        clock: (@Sendable () -> Int64)? = nil
    ) -> HTTPServer.Configuration {
        var configuration = HTTPServer.Configuration(
            host: "127.0.0.1", port: 0, maxConnections: maxConnections,
            idleTimeout: idleTimeout, requestTimeout: requestTimeout,
            writeTimeout: .seconds(5), lingerTimeout: .milliseconds(200))
        if let clock {
            configuration.clock = clock
        }
        return configuration
    }

    /// Answers 200 with a JSON description of the request.
    static let echoHandler: @Sendable (HTTPRequest) -> HTTPServerAction = { request in
        struct Echo: Encodable {
            let method: String
            let path: String
            let query: String?
            let body: String
        }
        let echo = Echo(
            method: request.method, path: request.path, query: request.query,
            body: String(decoding: request.body, as: UTF8.self))
        do {
            return .respond(try HTTPResponse.json(status: 200, echo))
        } catch {
            return .respond(.text(status: 500, "\(error)"))
        }
    }

    static func startServer(
        _ configuration: HTTPServer.Configuration = HTTPTestSupport.configuration(),
        handler: @escaping @Sendable (HTTPRequest) -> HTTPServerAction = HTTPTestSupport.echoHandler
    ) throws -> (HTTPServer, HTTPServerAddress) {
        let server = HTTPServer(configuration: configuration, handler: handler)
        let address = try server.start()
        return (server, address)
    }

    static func get(_ path: String, extraHeaders: String = "") -> String {
        "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(extraHeaders)\r\n"
    }

    static func post(_ path: String, body: String, extraHeaders: String = "") -> String {
        "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\(extraHeaders)\r\n\(body)"
    }

    /// A well-formed request on a fresh connection is answered 200: the server is still up.
    static func serverStillAnswers(port: Int) -> Bool {
        do {
            let client = try RawHTTPClient(port: port)
            let response = try client.roundTrip(get("/health"), timeout: .seconds(5))
            return response.status == 200
        } catch {
            return false
        }
    }

    /// Waits for a condition that is not signalled by an event the test can block on (such as a
    /// server-side counter), checking it every few milliseconds until `timeout`.
    static func waitUntil(timeout: Duration = LooseTimeBounds.scaled(.seconds(5)), _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            usleep(2_000)
        }
        return condition()
    }

    /// Descriptors of this process that are sockets on 127.0.0.1 with `port` at either end
    /// (the listener, the connections it accepted, the clients' sockets): the leak check for one
    /// server. Unlike a process-wide count it is not disturbed by the other tests that run in
    /// parallel in the same process.
    static func socketDescriptorCount(port: Int) -> Int {
        Set(LoopbackSockets.descriptors(withLocalPort: port) + LoopbackSockets.descriptors(withPeerPort: port)).count
    }

    /// Runs `body(index)` on `count` dedicated threads (not the cooperative pool, which blocking
    /// socket calls would starve) and returns the results in index order, or nil on timeout.
    static func onThreads<T: Sendable>(
        _ count: Int, timeout: Duration = .seconds(60),
        _ body: @escaping @Sendable (Int) -> T
    ) -> [T]? {
        let results = Locked<[Int: T]>([:])  // not Mutex: visible to ThreadSanitizer
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                let value = body(index)
                results.withLock { $0[index] = value }
                group.leave()
            }
            thread.start()
        }
        let seconds = Double(timeout.components.seconds)
        guard group.wait(timeout: .now() + seconds) == .success else { return nil }
        return results.withLock { all in (0..<count).compactMap { all[$0] } }
    }

    /// Runs `body` on a dedicated thread and returns at once.
    static func onThread(_ body: @escaping @Sendable () -> Void) {
        Thread { body() }.start()
    }

    /// True when ::1 can be bound (IPv6 may be disabled in containers).
    static let ipv6LoopbackAvailable: Bool = {
        let server = HTTPServer(configuration: HTTPServer.Configuration(host: "::1")) { _ in .closeWithoutAnswer }
        defer { server.stop() }
        return (try? server.start()) != nil
    }()
}

/// A one-shot flag a server handler sets and a test waits for.
final class HTTPTestEvent: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func signal() {
        semaphore.signal()
    }

    /// True when signalled before `timeout` (a bound against a hang, stretched in the sanitizer runs).
    func wait(timeout: Duration = LooseTimeBounds.scaled(.seconds(10))) -> Bool {
        semaphore.wait(
            timeout: .now() + Double(timeout.components.seconds)
                + Double(timeout.components.attoseconds) / 1e18) == .success
    }
}

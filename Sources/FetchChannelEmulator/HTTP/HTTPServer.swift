/// A small HTTP/1.1 server on POSIX sockets, with one thread per connection, for the reference
/// backend (the emulator) and its tests.
///
/// ```swift
/// let server = HTTPServer(configuration: .init()) { request in
///     .respond(.text(status: 200, "hello"))
/// }
/// let address = try server.start()   // address.baseURL == http://127.0.0.1:<port>
/// defer { server.stop() }
/// ```
///
/// The handler runs on the connection's thread, one request at a time per connection, concurrently
/// across connections; it must not block indefinitely, since stop() waits for it to return. It
/// should not capture the server strongly (that would be a reference cycle, and deinit would never
/// stop the server).
public final class HTTPServer: Sendable {
    private let engine: HTTPServerEngine

    public init(
        configuration: Configuration = Configuration(),
        handler: @escaping @Sendable (HTTPRequest) -> HTTPServerAction
    ) {
        engine = HTTPServerEngine(configuration: configuration, handler: handler)
    }

    deinit {
        engine.stop()
    }

    public var configuration: Configuration {
        engine.configuration
    }

    /// Binds, listens and starts accepting. A server starts at most once.
    @discardableResult
    public func start() throws(HTTPServerError) -> HTTPServerAddress {
        try engine.start(beforeAccepting: { _ in })
    }

    /// Binds and listens, hands the address to `beforeAccepting`, and only then starts accepting:
    /// no request reaches the handler before `beforeAccepting` returned (what the handler needs
    /// to know of the address is known by then). It runs under the server's lock: it must not
    /// call the server.
    @discardableResult
    func start(beforeAccepting: (HTTPServerAddress) -> Void) throws(HTTPServerError) -> HTTPServerAddress {
        try engine.start(beforeAccepting: beforeAccepting)
    }

    /// Closes the listener and every connection, interrupting reads, writes, delays and hangs,
    /// and joins every server thread: when it returns, no thread of this server runs (except the
    /// calling thread itself if a handler calls it) and its descriptors are closed. Idempotent and
    /// callable from any thread; a concurrent call waits for the first to finish.
    public func stop() {
        engine.stop()
    }

    /// Where the server listens, once started.
    public var address: HTTPServerAddress? {
        engine.address
    }

    public var statistics: HTTPServerStatistics {
        engine.statistics
    }

    /// Connections currently served.
    public var openConnectionCount: Int {
        engine.statistics.openConnections
    }

    /// Connections accepted since start (rejected ones included).
    public var totalAccepted: Int {
        engine.statistics.totalAccepted
    }
}

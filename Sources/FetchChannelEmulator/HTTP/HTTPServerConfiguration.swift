extension HTTPServer {
    /// Everything that can be tuned about the server; tests shrink the timeouts to milliseconds.
    public struct Configuration: Sendable {
        /// Numeric IPv4/IPv6 literal (or `localhost`). Only loopback unless `allowNonLoopback`.
        public var host: String
        /// 0 asks the kernel for an ephemeral port.
        public var port: Int
        /// The emulator is a test fixture: listening beyond loopback must be asked for explicitly.
        public var allowNonLoopback: Bool
        /// Connections served at once. One more closes the least recently used idle connection
        /// (one waiting for a request) and takes its place; only with none idle is it refused:
        /// answered 503 and closed (over TLS closed without an answer).
        public var maxConnections: Int
        public var listenBacklog: Int
        public var limits: Limits
        /// How long a kept-alive (or fresh) connection may wait for the first byte of a request.
        /// On expiry the connection is closed without an answer.
        public var idleTimeout: Duration
        /// Total deadline for one request, head and body, from its first byte. On expiry: 408, then close.
        /// A deadline, not an inactivity timer, so one byte per second cannot keep a request alive.
        public var requestTimeout: Duration
        /// Deadline for writing one answer to a client that does not read.
        public var writeTimeout: Duration
        /// After an answer that closes the connection the server shuts down its sending side and
        /// discards what the client still sends for up to this long, so that closing with unread
        /// data does not reset the connection and destroy the answer before the client reads it.
        public var lingerTimeout: Duration
        /// Stack size of each server thread. Smaller than the 8 MiB default so that `maxConnections`
        /// threads stay cheap, large enough for handlers that decode JSON or call OpenSSL in debug builds.
        public var threadStackSize: Int
        /// Milliseconds since the Unix epoch for the `Date` header; injectable so tests and the
        /// emulator's clock offset control what clients see.
        public var clock: @Sendable () -> Int64
        /// When set, every connection is TLS with this identity (https); the handshake runs under
        /// the same deadlines and connection cap as a request. Nil: plain HTTP.
        public var tlsIdentity: TLSServerIdentity?

        public init(
            host: String = "127.0.0.1",
            port: Int = 0,
            allowNonLoopback: Bool = false,
            maxConnections: Int = 256,
            listenBacklog: Int = 128,
            limits: Limits = Limits(),
            idleTimeout: Duration = .seconds(30),
            requestTimeout: Duration = .seconds(10),
            writeTimeout: Duration = .seconds(10),
            lingerTimeout: Duration = .seconds(1),
            threadStackSize: Int = 2 << 20,
            clock: @escaping @Sendable () -> Int64 = HTTPServerDate.systemMillis,
            tlsIdentity: TLSServerIdentity? = nil
        ) {
            self.host = host
            self.port = port
            self.allowNonLoopback = allowNonLoopback
            self.maxConnections = maxConnections
            self.listenBacklog = listenBacklog
            self.limits = limits
            self.idleTimeout = idleTimeout
            self.requestTimeout = requestTimeout
            self.writeTimeout = writeTimeout
            self.lingerTimeout = lingerTimeout
            self.threadStackSize = threadStackSize
            self.clock = clock
            self.tlsIdentity = tlsIdentity
        }

        /// Throws `.invalidConfiguration` for values the server cannot honour.
        func validate() throws(HTTPServerError) {
            func require(_ condition: Bool, _ reason: String) throws(HTTPServerError) {
                if !condition { throw HTTPServerError(.invalidConfiguration, reason) }
            }
            try require((0...65_535).contains(port), "port \(port) is outside 0...65535")
            try require(maxConnections >= 1, "maxConnections must be at least 1")
            try require(listenBacklog >= 1, "listenBacklog must be at least 1")
            // The upper bounds keep the parser's and the deadlines' arithmetic far from overflow.
            let gibibyte = 1 << 30
            try require((16...gibibyte).contains(limits.maxRequestLineLength), "maxRequestLineLength must be 16...2^30")
            try require((1...1 << 20).contains(limits.maxHeaderCount), "maxHeaderCount must be 1...2^20")
            try require((64...gibibyte).contains(limits.maxHeaderBytes), "maxHeaderBytes must be 64...2^30")
            try require((0...gibibyte).contains(limits.maxBodyBytes), "maxBodyBytes must be 0...2^30")
            let day = Duration.seconds(86_400)
            try require(idleTimeout > .zero && idleTimeout <= day, "idleTimeout must be positive, at most a day")
            try require(
                requestTimeout > .zero && requestTimeout <= day, "requestTimeout must be positive, at most a day")
            try require(writeTimeout > .zero && writeTimeout <= day, "writeTimeout must be positive, at most a day")
            try require(lingerTimeout >= .zero && lingerTimeout <= day, "lingerTimeout must be 0...a day")
            try require(threadStackSize >= 64 * 1024, "threadStackSize must be at least 64 KiB")
        }
    }

    /// Request size limits; each exceeded limit has its own status code.
    public struct Limits: Sendable, Hashable {
        /// Request line without CRLF. Exceeded: 414 if the target is what is long, else 400.
        public var maxRequestLineLength: Int
        /// Header field lines. Exceeded: 431.
        public var maxHeaderCount: Int
        /// Bytes of all header field lines, CRLFs included. Exceeded: 431.
        public var maxHeaderBytes: Int
        /// Announced `Content-Length`. Exceeded: 413, before the body is read.
        public var maxBodyBytes: Int

        public init(
            maxRequestLineLength: Int = 8 * 1024,
            maxHeaderCount: Int = 100,
            maxHeaderBytes: Int = 32 * 1024,
            maxBodyBytes: Int = 1 << 20
        ) {
            self.maxRequestLineLength = maxRequestLineLength
            self.maxHeaderCount = maxHeaderCount
            self.maxHeaderBytes = maxHeaderBytes
            self.maxBodyBytes = maxBodyBytes
        }
    }
}

/// A snapshot of the server's counters, for tests and the emulator's stats route.
public struct HTTPServerStatistics: Sendable, Hashable {
    /// Connections currently served by a connection thread (an evicted one stops counting at once).
    public var openConnections: Int
    /// Open connections waiting for the first byte of a request (kept alive, or fresh and silent).
    public var idleConnections: Int
    /// Connections accepted since start, rejected ones included.
    public var totalAccepted: Int
    /// Connections answered 503 and closed because `maxConnections` were open and none was idle.
    public var rejectedConnections: Int
    /// Idle connections closed to admit a new one because `maxConnections` were open.
    public var evictedConnections: Int
    /// Requests handed to the handler.
    public var totalRequests: Int
    /// Server threads (accept thread and connection threads) that have not finished; 0 after stop().
    public var liveThreads: Int

    public init(
        openConnections: Int = 0, totalAccepted: Int = 0, rejectedConnections: Int = 0,
        totalRequests: Int = 0, liveThreads: Int = 0, idleConnections: Int = 0, evictedConnections: Int = 0
    ) {
        self.openConnections = openConnections
        self.idleConnections = idleConnections
        self.evictedConnections = evictedConnections
        self.totalAccepted = totalAccepted
        self.rejectedConnections = rejectedConnections
        self.totalRequests = totalRequests
        self.liveThreads = liveThreads
    }
}

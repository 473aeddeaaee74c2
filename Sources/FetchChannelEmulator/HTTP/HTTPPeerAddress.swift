/// The address of the client at the other end of a connection.
///
/// Carried on every request so that the emulator can refuse its control routes to non-loopback peers.
public struct HTTPPeerAddress: Sendable, Hashable, CustomStringConvertible {
    /// Numeric host, e.g. "127.0.0.1" or "::1".
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Whether the peer is on 127.0.0.0/8 or ::1 (or IPv4-mapped loopback). False for any host that is
    /// not a numeric address.
    public var isLoopback: Bool {
        HTTPIPAddress(literal: host)?.isLoopback ?? false
    }

    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

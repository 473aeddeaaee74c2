import Foundation

/// Where a started server listens.
public struct HTTPServerAddress: Sendable, Hashable, CustomStringConvertible {
    /// Numeric host the listener is bound to, e.g. "127.0.0.1" or "::1".
    public let host: String
    /// The bound port (the ephemeral one chosen by the kernel when the configuration asked for 0).
    public let port: Int
    /// `http://127.0.0.1:54321` (`https` with TLS; IPv6 hosts in brackets), without a trailing slash.
    public let baseURL: URL

    init(scheme: String = "http", host: String, urlHost: String, port: Int) throws(HTTPServerError) {
        guard let url = URL(string: "\(scheme)://\(urlHost):\(port)") else {
            throw HTTPServerError(.invalidHost, "cannot form a URL from host \(urlHost) and port \(port)")
        }
        self.host = host
        self.port = port
        self.baseURL = url
    }

    public var description: String { baseURL.absoluteString }
}

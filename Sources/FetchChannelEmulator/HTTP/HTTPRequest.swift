import FetchChannelWire
import Foundation

/// A parsed request, as handed to the server's handler.
public struct HTTPRequest: Sendable, Hashable {
    /// The method token, case-sensitive as sent ("GET", "POST", ...).
    public var method: String
    /// The request-target exactly as sent on the request line.
    public var target: String
    /// The path part of the target, still percent-encoded ("/a%20b"). For an absolute-form target
    /// the scheme and authority are dropped; for OPTIONS `*` it is "*".
    public var path: String
    /// The part after the first "?", still percent-encoded; nil when there is no "?".
    public var query: String?
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The client's address, so that routes can be limited to loopback peers.
    public var peer: HTTPPeerAddress

    public init(
        method: String,
        target: String,
        path: String? = nil,
        query: String? = nil,
        version: HTTPVersion = .http1_1,
        headers: HTTPHeaders = [:],
        body: [UInt8] = [],
        peer: HTTPPeerAddress = HTTPPeerAddress(host: "127.0.0.1", port: 0)
    ) {
        self.method = method
        self.target = target
        if let path {
            self.path = path
            self.query = query
        } else if let question = target.firstIndex(of: "?") {
            self.path = String(target[..<question])
            self.query = String(target[target.index(after: question)...])
        } else {
            self.path = target
            self.query = query
        }
        self.version = version
        self.headers = headers
        self.body = body
        self.peer = peer
    }

    public var bodyData: Data {
        Data(body)
    }

    /// Whether the client asked to close the connection after this request: `Connection: close`,
    /// or HTTP/1.0 without `Connection: keep-alive` (RFC 9112 §9.3).
    public var wantsConnectionClose: Bool {
        if headers.containsToken("close", inField: WireHeader.connection) {
            return true
        }
        if version == .http1_0 {
            return !headers.containsToken("keep-alive", inField: WireHeader.connection)
        }
        return false
    }
}

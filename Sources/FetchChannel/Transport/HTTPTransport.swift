import Foundation

/// One request for a ``HTTPTransport``.
package struct TransportRequest: Sendable {
    package var method: String
    package var url: URL
    /// Header fields to send; the transport adds nothing but what HTTP itself needs.
    package var headers: [String: String]
    package var body: Data?
    /// The whole exchange's limit, connection and TLS handshake included (the clients also race
    /// it with their ``RequestTimer`` unless the transport keeps it exactly).
    package var timeout: Duration
    /// What an `https://` server must present: the backend's trust (ignored for loopback `http://`).
    package var trust: TLSTrust

    package init(
        method: String, url: URL, headers: [String: String], body: Data?, timeout: Duration,
        trust: TLSTrust = .system
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.trust = trust
    }
}

/// Sends one request and reports what came of it; never throws.
///
/// `package` so that the CLI sends its own requests (register, rotate, skew) through the same
/// transport as the library, and so that tests can use a fake; ``DefaultTransport`` makes the
/// production one. Implementations must return promptly with a `.cancelled` failure when
/// the calling task is cancelled, must not follow redirects, must stop reading a body after
/// ``HTTPAnswer/maximumBodyBytes`` (``HTTPAnswer/bodyWasCutOff``), must refuse what
/// ``TransportSecurity`` refuses, and must verify `https` servers against the request's
/// ``TransportRequest/trust`` (or refuse a trust they cannot check).
package protocol HTTPTransport: Sendable {
    func send(_ request: TransportRequest) async -> TransportResult
    /// True when the transport ends a request at its ``TransportRequest/timeout`` to the
    /// millisecond, in real time, with a `timedOut` failure (libcurl's CURLOPT_TIMEOUT_MS). False
    /// by default: URLSession rounds timeouts up to whole seconds, and fakes keep no time.
    var keepsTimeoutExactly: Bool { get }
}

extension HTTPTransport {
    package var keepsTimeoutExactly: Bool { false }
}

/// The production transport every request of the package goes through: the library's fetch and
/// redemption clients and the CLI's own calls. One place, so that the rules of
/// ``HTTPTransport`` (no redirects, a bounded body, loopback-only plain HTTP) hold for all of them.
///
/// On Linux that is the process-wide ``CurlTransport/shared`` (the system libcurl: keep-alive per
/// backend, a private CA and pins per backend). Elsewhere (Apple platforms, where libcurl is not
/// built) a URLSession, which refuses any trust but the system's.
package enum DefaultTransport {
    package static func make() -> any HTTPTransport {
        #if os(Linux)
            CurlTransport.shared
        #else
            URLSessionTransport()
        #endif
    }
}

import Foundation

/// One request for a ``HTTPTransport``.
package struct TransportRequest: Sendable {
    package var method: String
    package var url: URL
    /// Header fields to send; the transport adds nothing but what HTTP itself needs.
    package var headers: [String: String]
    package var body: Data?
    /// The transport's own limit; the fetch client enforces the exact timeout itself.
    package var timeout: Duration

    package init(method: String, url: URL, headers: [String: String], body: Data?, timeout: Duration) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// Sends one request and reports what came of it; never throws.
///
/// `package` so that the CLI sends its own requests (register, rotate, skew) through the same
/// transport as the library, and so that tests can use a fake; ``DefaultTransport`` makes the
/// production one. Implementations must return promptly with a `.cancelled` failure when
/// the calling task is cancelled, must not follow redirects, and must stop reading a body after
/// ``HTTPAnswer/maximumBodyBytes`` (``HTTPAnswer/bodyWasCutOff``).
package protocol HTTPTransport: Sendable {
    func send(_ request: TransportRequest) async -> TransportResult
}

/// The production transport every request of the package goes through: the library's fetch and
/// redemption clients and the CLI's own calls. One place, so that the rules of
/// ``HTTPTransport`` (no redirects, a bounded body, loopback-only plain HTTP) hold for all of them.
package enum DefaultTransport {
    package static func make() -> any HTTPTransport {
        URLSessionTransport()
    }
}

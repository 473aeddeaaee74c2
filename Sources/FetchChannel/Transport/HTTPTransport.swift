import Foundation

/// One request for a ``HTTPTransport``.
struct TransportRequest: Sendable {
    var method: String
    var url: URL
    /// Header fields to send; the transport adds nothing but what HTTP itself needs.
    var headers: [String: String]
    var body: Data?
    /// The transport's own limit; the fetch client enforces the exact timeout itself.
    var timeout: Duration
}

/// Sends one request and reports what came of it; never throws.
///
/// Internal so that the client can be tested with a fake: the only production implementation is
/// ``URLSessionTransport``. Implementations must return promptly with a `.cancelled` failure when
/// the calling task is cancelled, must not follow redirects, and must stop reading a body after
/// ``HTTPAnswer/maximumBodyBytes`` (``HTTPAnswer/bodyWasCutOff``).
protocol HTTPTransport: Sendable {
    func send(_ request: TransportRequest) async -> TransportResult
}

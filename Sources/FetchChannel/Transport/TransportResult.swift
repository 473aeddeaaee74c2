/// What one request came to at the transport level: an HTTP answer, or none.
public enum TransportResult: Sendable, Hashable {
    /// An HTTP answer, whatever its status.
    case answer(HTTPAnswer)
    /// No answer: see ``NetworkFailure/Kind``.
    case failure(NetworkFailure)
    /// Bytes came back that are not an HTTP answer (a garbled status line, HTTP/0.9, another
    /// protocol on the port). Mapped to `invalidResponse`: something answered, but not usably.
    case notHTTP(String)
}

/// What the server does with a request, as decided by the handler.
///
/// Besides answering, the cases emulate the faults a real backend or network shows, so that a
/// client's timeout and error paths can be tested against a real socket.
public enum HTTPServerAction: Sendable {
    /// Write the answer.
    case respond(HTTPResponse)
    /// Wait, then write the answer. The wait is interrupted by stop(), which then closes the
    /// connection without an answer; a negative delay counts as 0.
    case respondAfter(delayMillis: Int, HTTPResponse)
    /// Close the connection without writing anything: the client reads end of stream.
    case closeWithoutAnswer
    /// Write the head with a `Content-Length` one byte larger than the body, write the body, then
    /// keep the connection open without reading. This variant is chosen because a client that got a
    /// complete answer would not notice a hang; one that is owed a byte waits until its own timeout.
    /// The hang ends when the client closes its side, the server stops, or the idle timeout passes.
    case respondThenHang(HTTPResponse)
    /// Write these bytes verbatim (no status line, no headers added), then close the connection or
    /// go on reading the next request on it.
    case rawBytes([UInt8], thenClose: Bool)
}

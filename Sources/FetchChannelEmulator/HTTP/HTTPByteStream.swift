/// The bytes of one connection as `HTTPConnection` reads requests from it and writes answers to it:
/// the socket itself (plain HTTP) or a TLS session over it. The parser and the answers do not know
/// which; both wait only through `HTTPPoll`, under the caller's deadline and the stop signal.
protocol HTTPByteStream: ~Copyable {
    /// The socket underneath, for waits that read nothing (a hang until the client shuts down).
    var fd: Int32 { get }
    /// Whether bytes already received wait inside the stream (decrypted but unread), so that a read
    /// returns without the socket becoming readable: such a connection is not idle.
    var hasBufferedInput: Bool { get }
    /// Whether the last read stopped because the stream must write first (TLS: a reply libssl owes
    /// the client, such as to a KeyUpdate, that the socket has no room for). Such a connection is
    /// not idle: waiting for the socket to become readable again would not let it go on.
    var isWaitingToWrite: Bool { get }
    /// Reads what is available (at most `buffer.count` bytes) into the start of `buffer`, waiting until `deadline`.
    func receive(
        into buffer: inout [UInt8], until deadline: ContinuousClock.Instant?,
        stop: HTTPStopSignal
    ) -> HTTPSocket.ReceiveOutcome
    /// Writes all of `bytes`, waiting for buffer space until `deadline`.
    func sendAll(
        _ bytes: [UInt8], until deadline: ContinuousClock.Instant?,
        stop: HTTPStopSignal
    ) -> HTTPSocket.SendOutcome
    /// Ends the sending side so the client sees the end of the answer, then discards what the client
    /// still sends until it closes or `deadline` (see `HTTPSocket.lingeringShutdown`).
    func lingeringShutdown(until deadline: ContinuousClock.Instant, stop: HTTPStopSignal, maxDiscard: Int)
}

extension HTTPByteStream where Self: ~Copyable {
    /// Reads and drops what the client sends until it closes, `deadline` or `maxDiscard` bytes.
    func discardUntilClosed(until deadline: ContinuousClock.Instant, stop: HTTPStopSignal, maxDiscard: Int) {
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        var discarded = 0
        while discarded < maxDiscard {
            guard case .received(let count) = receive(into: &scratch, until: deadline, stop: stop) else { return }
            discarded += count
        }
    }
}

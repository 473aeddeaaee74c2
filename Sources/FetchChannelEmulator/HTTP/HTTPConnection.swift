import Glibc

/// Serves one accepted connection on its own thread: reads requests, asks the handler, writes the
/// answers, until the client closes, a timeout expires, an error answer is sent, or the server stops.
///
/// Timeouts: waiting for the first byte of a request is bounded by `idleTimeout` (expiry closes
/// silently: nothing was asked); from that first byte the whole request, head and body, must arrive
/// within `requestTimeout` (expiry answers 408 and closes). After any error answer the connection
/// is closed, because the framing of what follows can no longer be trusted.
///
/// While it waits for the first byte of a request the connection is idle in its slot, and the
/// accept thread may shut it down to admit a new client at the connection cap; it reads nothing
/// while idle, so an eviction never loses a request.
struct HTTPConnection {
    /// The connection's bytes: the socket itself, or TLS over it.
    typealias ByteStream = HTTPByteStream & ~Copyable

    let engine: HTTPServerEngine
    let stop: HTTPStopSignal
    let slot: HTTPConnectionSlot
    var parser: HTTPRequestParser
    /// When bytes last arrived (or the connection was accepted): the order of eviction. Taken
    /// before the answer to them is written, so it orders connections as their clients used them.
    private var lastActivity = ContinuousClock.now

    private enum Continuation {
        case keepOpen
        /// Close at once (nothing was written, or the client is gone).
        case close
        /// An answer went out and the connection ends: half-close and linger so it is not reset.
        case closeAfterAnswer
    }

    private static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    init(engine: HTTPServerEngine, stop: HTTPStopSignal, peer: HTTPPeerAddress, slot: HTTPConnectionSlot) {
        self.engine = engine
        self.stop = stop
        self.slot = slot
        self.parser = HTTPRequestParser(limits: engine.configuration.limits, peer: peer)
    }

    private var configuration: HTTPServer.Configuration { engine.configuration }

    mutating func run(on socket: borrowing some ByteStream) {
        var readBuffer = [UInt8](repeating: 0, count: 16 * 1024)
        var idleDeadline = ContinuousClock.now + configuration.idleTimeout
        var requestDeadline: ContinuousClock.Instant?
        var sentContinue = false

        while !stop.isSignalled {
            switch parser.next() {
            case .request(let request):
                requestDeadline = nil
                sentContinue = false
                switch respond(to: request, on: socket) {
                case .keepOpen:
                    idleDeadline = ContinuousClock.now + configuration.idleTimeout
                    continue
                case .close:
                    return
                case .closeAfterAnswer:
                    lingerAndReturn(socket)
                    return
                }
            case .failure(let error):
                answerError(status: error.status, reason: error.reason, on: socket)
                return
            case .needMore:
                break
            }

            // A request has begun once a byte of it is buffered; the empty lines a client may send
            // before a request line, which the parser has consumed, begin none. Decided here, after
            // the parser has read what arrived: a stray CRLF after an answer left the deadline of a
            // request that never came, and a 408 no one asked for.
            if !parser.hasStartedRequest {
                requestDeadline = nil
            } else if requestDeadline == nil {
                requestDeadline = ContinuousClock.now + configuration.requestTimeout
            }
            if parser.isAwaitingBodyAfterExpectContinue && !sentContinue {
                sentContinue = true
                guard socket.sendAll(Self.continueLine, until: writeDeadline(), stop: stop) == .sent else { return }
            }

            var deadline = requestDeadline ?? idleDeadline
            if requestDeadline == nil && !socket.hasBufferedInput {
                // A readable socket wins over a passed deadline in the wait below: a client whose
                // records carry no request (KeyUpdates) would keep an idle connection for good.
                guard ContinuousClock.now < idleDeadline else { return }
                // Idle (evictable) only while nothing has been read: the wait reads nothing, and
                // the connection is busy again before it reads. Bytes read while still idle would
                // be lost to an eviction, which spares only bytes still in the kernel's buffer.
                slot.becomeIdle(since: lastActivity)
                let arrived = HTTPPoll.wait(fd: socket.fd, events: Int16(POLLIN), stop: stop, deadline: idleDeadline)
                // Evicted to admit another client, idle for too long (closed silently), or stopping.
                guard slot.becomeBusy(), case .ready = arrived else { return }
                // What woke the wait may carry no request: a TLS record of its own (a KeyUpdate,
                // which libssl reads and answers) leaves the connection as idle as it was. It is
                // read without waiting; only a request's bytes, or a record begun, make it busy.
                switch socket.receive(into: &readBuffer, until: ContinuousClock.now, stop: stop) {
                case .received(let count):
                    lastActivity = ContinuousClock.now
                    parser.append(readBuffer[0..<count])
                    continue
                case .timedOut where !socket.hasBufferedInput && !socket.isWaitingToWrite:
                    continue  // idle again, until the same idle deadline
                // Owing the client a write (a KeyUpdate's reply the socket has no room for): the
                // socket stays readable, and going back to the idle wait would spin until the idle
                // deadline. The wait below waits for room, within a request's time.
                case .timedOut:
                    break
                case .endOfStream, .stopped, .failed:
                    return
                }
                // What has begun to arrive must be whole within a request's time: a TLS record
                // read in part would otherwise hold this busy slot until the idle deadline.
                deadline = min(deadline, ContinuousClock.now + configuration.requestTimeout)
            }
            let received = socket.receive(into: &readBuffer, until: deadline, stop: stop)
            switch received {
            case .received(let count):
                lastActivity = ContinuousClock.now
                parser.append(readBuffer[0..<count])
            case .timedOut:
                if requestDeadline != nil {
                    answerError(
                        status: 408, reason: "the request did not arrive within \(configuration.requestTimeout)",
                        on: socket)
                }
                return
            case .endOfStream, .stopped, .failed:
                // A client that closes mid-request cannot read an answer; a stopping server closes.
                return
            }
        }
    }

    // MARK: - TLS

    /// The server side of the TLS handshake, under the deadlines of a request: waiting for the
    /// ClientHello is waiting for a client's first bytes (idle, evictable at the connection cap,
    /// closed silently after `idleTimeout`); from its first byte the handshake must end within
    /// `requestTimeout`. Nil when it does not: plaintext, a stalled or vanished client, a stop.
    mutating func acceptTLS(_ identity: TLSServerIdentity, on socket: borrowing HTTPSocket) -> TLSServerSession? {
        slot.becomeIdle(since: lastActivity)
        let arrived = HTTPPoll.wait(
            fd: socket.fd, events: Int16(POLLIN), stop: stop,
            deadline: ContinuousClock.now + configuration.idleTimeout)
        guard slot.becomeBusy(), case .ready = arrived else { return nil }
        lastActivity = ContinuousClock.now
        guard let session = TLSServerSession(identity: identity, fd: socket.fd),
            session.accept(until: ContinuousClock.now + configuration.requestTimeout, stop: stop) == .established
        else { return nil }
        return session
    }

    // MARK: - Answers

    private func respond(to request: HTTPRequest, on socket: borrowing some ByteStream) -> Continuation {
        engine.recordRequest()
        switch engine.handler(request) {
        case .respond(let response):
            return write(response, to: request, on: socket)

        case .respondAfter(let delayMillis, let response):
            let deadline = ContinuousClock.now + .milliseconds(max(0, delayMillis))
            guard HTTPPoll.wait(fd: -1, events: 0, stop: stop, deadline: deadline) == .timedOut else {
                return .close  // stopped (or poll failed): give up the answer, stop() must not wait.
            }
            return write(response, to: request, on: socket)

        case .closeWithoutAnswer:
            return .close

        case .respondThenHang(let response):
            let bytes = HTTPResponseSerializer.serialize(
                response, dateMillis: configuration.clock(), omitBody: request.method == "HEAD",
                connection: .none, contentLengthSurplus: 1)
            guard socket.sendAll(bytes, until: writeDeadline(), stop: stop) == .sent else { return .close }
            // Read nothing; wake only when the client shuts down its side, the server stops, or the
            // connection has been idle for the idle timeout: a client that never gives up must not
            // hold one of the server's connection slots for ever.
            _ = HTTPPoll.wait(
                fd: socket.fd, events: HTTPPoll.readHangUp, stop: stop,
                deadline: ContinuousClock.now + configuration.idleTimeout)
            return .close

        case .rawBytes(let bytes, let thenClose):
            guard socket.sendAll(bytes, until: writeDeadline(), stop: stop) == .sent else { return .close }
            return thenClose ? .closeAfterAnswer : .keepOpen
        }
    }

    private func write(_ response: HTTPResponse, to request: HTTPRequest, on socket: borrowing some ByteStream)
        -> Continuation
    {
        let close = request.wantsConnectionClose || HTTPResponseSerializer.asksToClose(response) || stop.isSignalled
        let connectionField: HTTPResponseSerializer.ConnectionField =
            close ? .close : (request.version == .http1_0 ? .keepAlive : .none)
        let bytes = HTTPResponseSerializer.serialize(
            response, dateMillis: configuration.clock(), omitBody: request.method == "HEAD", connection: connectionField
        )
        guard socket.sendAll(bytes, until: writeDeadline(), stop: stop) == .sent else { return .close }
        return close ? .closeAfterAnswer : .keepOpen
    }

    private func answerError(status: Int, reason: String, on socket: borrowing some ByteStream) {
        let bytes = HTTPResponseSerializer.serialize(
            HTTPResponse.serverError(status: status, reason: reason),
            dateMillis: configuration.clock(), omitBody: false, connection: .close)
        if socket.sendAll(bytes, until: writeDeadline(), stop: stop) == .sent {
            lingerAndReturn(socket)
        }
    }

    private func lingerAndReturn(_ socket: borrowing some ByteStream) {
        socket.lingeringShutdown(
            until: ContinuousClock.now + configuration.lingerTimeout, stop: stop,
            maxDiscard: 1 << 20)
    }

    private func writeDeadline() -> ContinuousClock.Instant {
        ContinuousClock.now + configuration.writeTimeout
    }
}

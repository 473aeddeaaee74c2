internal import COpenSSL
import Glibc

/// One connection's TLS server session: libssl on the connection's non-blocking socket, every
/// WANT_READ / WANT_WRITE turned into an `HTTPPoll` wait under the caller's deadline and the stop
/// signal (docs/ARCHITECTURE.md, "Transport and trust"). Used by the connection's thread only.
final class TLSServerSession: HTTPByteStream {
    private let ssl: OpaquePointer
    /// The socket, not owned: the connection thread closes it after this session is gone
    /// (SSL_set_fd makes a BIO that does not close it).
    let fd: Int32
    /// Set once the handshake has completed: only then is a close_notify meaningful.
    private var isEstablished = false
    /// Set after a fatal libssl error or a close: SSL_shutdown must not be called then.
    private var isBroken = false
    /// Set once close_notify went out: a second SSL_shutdown would wait for the client's.
    private var isCloseNotifySent = false

    /// A session from `identity`'s context on `fd`; nil when libssl cannot create one.
    init?(identity: TLSServerIdentity, fd: Int32) {
        ERR_clear_error()
        guard let ssl = SSL_new(identity.context) else {
            ERR_clear_error()
            return nil
        }
        guard SSL_set_fd(ssl, fd) == 1 else {
            SSL_free(ssl)
            ERR_clear_error()
            return nil
        }
        self.ssl = ssl
        self.fd = fd
    }

    deinit {
        SSL_free(ssl)
    }

    var hasBufferedInput: Bool {
        SSL_has_pending(ssl) == 1
    }

    /// libssl's last call stopped to write (SSL_want_write, a macro Swift cannot call).
    var isWaitingToWrite: Bool {
        SSL_want(ssl) == SSL_WRITING
    }

    // MARK: - Handshake

    enum HandshakeOutcome: Equatable {
        case established
        case timedOut
        case stopped
        /// Not TLS (plaintext HTTP, say), no common version or cipher, or the client left.
        case failed
    }

    /// The server side of the handshake, until `deadline`.
    func accept(until deadline: ContinuousClock.Instant, stop: HTTPStopSignal) -> HandshakeOutcome {
        while true {
            clearErrors()
            let result = SSL_accept(ssl)
            if result == 1 {
                isEstablished = true
                return .established
            }
            switch next(after: result, until: deadline, stop: stop) {
            case .retry: continue
            case .timedOut: return .timedOut
            case .stopped: return .stopped
            case .closed, .failed: return .failed
            }
        }
    }

    // MARK: - HTTPByteStream

    func receive(
        into buffer: inout [UInt8], until deadline: ContinuousClock.Instant?,
        stop: HTTPStopSignal
    ) -> HTTPSocket.ReceiveOutcome {
        guard !buffer.isEmpty else { return .failed(EINVAL) }
        while true {
            clearErrors()
            var count = 0
            let result = buffer.withUnsafeMutableBytes { SSL_read_ex(ssl, $0.baseAddress, $0.count, &count) }
            if result == 1 { return .received(count) }
            switch next(after: result, until: deadline, stop: stop) {
            case .retry: continue
            case .timedOut: return .timedOut
            case .stopped: return .stopped
            case .closed: return .endOfStream
            case .failed(let code): return .failed(code)
            }
        }
    }

    func sendAll(
        _ bytes: [UInt8], until deadline: ContinuousClock.Instant?,
        stop: HTTPStopSignal
    ) -> HTTPSocket.SendOutcome {
        guard !bytes.isEmpty else { return .sent }  // SSL_write_ex refuses an empty write.
        return bytes.withUnsafeBytes { raw in
            while true {
                clearErrors()
                var written = 0
                // Without SSL_MODE_ENABLE_PARTIAL_WRITE success means every byte; a retry after
                // WANT_WRITE passes the same buffer, as libssl requires.
                if SSL_write_ex(ssl, raw.baseAddress, raw.count, &written) == 1 { return .sent }
                switch next(after: 0, until: deadline, stop: stop) {
                case .retry: continue
                case .timedOut: return .timedOut
                case .stopped: return .stopped
                case .closed: return .failed(EPIPE)
                case .failed(let code): return .failed(code)
                }
            }
        }
    }

    /// close_notify (best effort), then the socket's half-close and the discarding linger.
    func lingeringShutdown(until deadline: ContinuousClock.Instant, stop: HTTPStopSignal, maxDiscard: Int) {
        sendCloseNotify(until: deadline, stop: stop)
        if shutdown(fd, Int32(SHUT_WR)) != 0 {
            return  // ENOTCONN: the peer is already gone, nothing to linger for.
        }
        discardUntilClosed(until: deadline, stop: stop, maxDiscard: maxDiscard)
    }

    /// Tells the client the stream ends on purpose. Best effort: a client that left or does not
    /// read loses it; waits for buffer space at most until `deadline`, one try without one.
    func sendCloseNotify(until deadline: ContinuousClock.Instant?, stop: HTTPStopSignal) {
        guard isEstablished && !isBroken && !isCloseNotifySent else { return }
        while true {
            clearErrors()
            let result = SSL_shutdown(ssl)
            if result >= 0 {  // 0: ours is sent; 1: the client's arrived too.
                isCloseNotifySent = true
                return
            }
            guard deadline != nil, case .retry = next(after: result, until: deadline, stop: stop) else {
                ERR_clear_error()
                return
            }
        }
    }

    // MARK: - Waiting

    /// Before each libssl call: an empty error queue, and errno 0, so that an SSL_ERROR_SYSCALL
    /// with no errno of its own (an end of stream) is not read as an earlier call's error.
    private func clearErrors() {
        ERR_clear_error()
        errno = 0
    }

    private enum Next {
        case retry
        case timedOut
        case stopped
        /// The client closed: close_notify, or end of stream without one.
        case closed
        case failed(Int32)
    }

    /// After a libssl call returned `result` (<= 0): wait for what it wants, or say why it failed.
    /// The error queue is left empty.
    private func next(after result: Int32, until deadline: ContinuousClock.Instant?, stop: HTTPStopSignal) -> Next {
        let code = errno
        let events: Int16
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ:
            events = Int16(POLLIN)
        case SSL_ERROR_WANT_WRITE:
            events = Int16(POLLOUT)
        case SSL_ERROR_ZERO_RETURN:
            ERR_clear_error()
            return .closed
        case SSL_ERROR_SYSCALL:
            isBroken = true
            ERR_clear_error()
            return code == 0 ? .closed : .failed(code)
        default:
            // SSL_ERROR_SSL: a protocol error (plaintext, a bad record, an end without close_notify).
            isBroken = true
            ERR_clear_error()
            return .failed(EPROTO)
        }
        // A passed deadline ends the wait even when the socket is ready: a client whose records
        // never complete what is waited for (KeyUpdates, sent without pause) would otherwise
        // keep the call reading past it, for as long as it kept sending.
        if let deadline, ContinuousClock.now >= deadline { return .timedOut }
        switch HTTPPoll.wait(fd: fd, events: events, stop: stop, deadline: deadline) {
        case .ready: return .retry
        case .timedOut: return .timedOut
        case .stopped: return .stopped
        case .failed(let pollErrno): return .failed(pollErrno)
        }
    }
}

import Glibc

/// An owned socket descriptor. Non-copyable so that each descriptor is closed exactly once: by
/// `close()`, by `deinit`, or never here if ownership is handed on with `releaseOwnership()`.
///
/// Descriptors are non-blocking; every wait goes through `HTTPPoll` so that deadlines and the stop
/// signal apply. Every send uses MSG_NOSIGNAL: writing to a socket the peer closed must give EPIPE,
/// not a SIGPIPE that kills the process.
struct HTTPSocket: ~Copyable, HTTPByteStream {
    let fd: Int32

    /// The kernel's receive buffer is all there is; the connection slot checks it itself.
    var hasBufferedInput: Bool { false }

    /// A read never has to write first.
    var isWaitingToWrite: Bool { false }

    /// Takes ownership of `fd`.
    init(adopting fd: Int32) {
        self.fd = fd
    }

    deinit {
        HTTPSocket.closeDescriptor(fd)
    }

    consuming func close() {
        HTTPSocket.closeDescriptor(fd)
        discard self
    }

    /// Gives up ownership without closing, e.g. to move the descriptor to another thread, which adopts it.
    consuming func releaseOwnership() -> Int32 {
        let descriptor = fd
        discard self
        return descriptor
    }

    // MARK: - Reading

    enum ReceiveOutcome: Equatable {
        case received(Int)
        case endOfStream
        case timedOut
        case stopped
        case failed(Int32)
    }

    /// Reads what is available (at most `buffer.count` bytes) into the start of `buffer`, waiting until `deadline`.
    func receive(
        into buffer: inout [UInt8], until deadline: ContinuousClock.Instant?,
        stop: HTTPStopSignal
    ) -> ReceiveOutcome {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { return .received(count) }
            if count == 0 { return .endOfStream }
            switch afterFailedCall(events: Int16(POLLIN), until: deadline, stop: stop) {
            case .retry: continue
            case .timedOut: return .timedOut
            case .stopped: return .stopped
            case .failed(let code): return .failed(code)
            }
        }
    }

    /// What to do after a recv/send returned -1: retry on EINTR, wait for readiness on EAGAIN
    /// (until `deadline` or a stop), fail on anything else. Shared by reading and writing.
    private enum AfterFailure {
        case retry
        case timedOut
        case stopped
        case failed(Int32)
    }

    private func afterFailedCall(
        events: Int16, until deadline: ContinuousClock.Instant?,
        stop: HTTPStopSignal
    ) -> AfterFailure {
        let code = errno
        switch code {
        case EINTR:
            return .retry
        case EAGAIN, EWOULDBLOCK:
            switch HTTPPoll.wait(fd: fd, events: events, stop: stop, deadline: deadline) {
            case .ready: return .retry
            case .timedOut: return .timedOut
            case .stopped: return .stopped
            case .failed(let pollErrno): return .failed(pollErrno)
            }
        default:
            return .failed(code)
        }
    }

    // MARK: - Writing

    enum SendOutcome: Equatable {
        case sent
        case timedOut
        case stopped
        case failed(Int32)
    }

    /// Writes all of `bytes`, waiting for buffer space until `deadline`.
    func sendAll(_ bytes: [UInt8], until deadline: ContinuousClock.Instant?, stop: HTTPStopSignal) -> SendOutcome {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = send(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
                if count >= 0 {
                    offset += count
                    continue
                }
                switch afterFailedCall(events: Int16(POLLOUT), until: deadline, stop: stop) {
                case .retry: continue
                case .timedOut: return .timedOut
                case .stopped: return .stopped
                case .failed(let code): return .failed(code)
                }
            }
            return .sent
        }
    }

    /// One non-blocking attempt to write, for the accept thread, which must never wait on a client.
    func sendWithoutWaiting(_ bytes: [UInt8]) {
        let count = bytes.withUnsafeBytes { raw in
            send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        // A short or failed write only means the client misses the 503; it is being closed anyway.
        _ = count
    }

    /// Reads and drops whatever is already buffered, without waiting, up to `limit` bytes.
    func discardAvailable(limit: Int) {
        var scratch = [UInt8](repeating: 0, count: 4096)
        var total = 0
        while total < limit {
            let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                total += count
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return  // EOF, EAGAIN or an error: nothing more to drop now.
            }
        }
    }

    // MARK: - Closing

    /// Half-closes the sending side (FIN), so the client sees the end of the answer, then discards
    /// what the client still sends until it closes or `deadline`, so that the final close does not
    /// find unread data and reset the connection (which can destroy the answer in flight).
    func lingeringShutdown(until deadline: ContinuousClock.Instant, stop: HTTPStopSignal, maxDiscard: Int) {
        if shutdown(fd, Int32(SHUT_WR)) != 0 {
            return  // ENOTCONN: the peer is already gone, nothing to linger for.
        }
        discardUntilClosed(until: deadline, stop: stop, maxDiscard: maxDiscard)
    }

    // MARK: - Descriptor helpers

    /// close(2) once. EINTR is not retried: on Linux the descriptor is released even then, and a
    /// retry could close a descriptor another thread just opened.
    static func closeDescriptor(_ fd: Int32) {
        if Glibc.close(fd) != 0 {
            let code = errno
            // EBADF would mean a descriptor closed twice: a bug, caught in debug builds.
            assert(code != EBADF, "close(\(fd)) failed with EBADF")
        }
    }

    /// Sets an integer socket option; false with errno set on failure.
    static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) -> Bool {
        var value = value
        return setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0
    }
}

extension HTTPSocket {
    /// A listening socket on `address:port` (0 = ephemeral), non-blocking, close-on-exec, SO_REUSEADDR.
    static func listen(on address: HTTPIPAddress, port: UInt16, backlog: Int) throws(HTTPServerError) -> HTTPSocket {
        let fd = socket(
            address.family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else {
            throw HTTPServerError(.socketFailed, "socket() failed", errno: errno)
        }
        let listener = HTTPSocket(adopting: fd)
        // Restarting on the same port must not fail because of the previous run's TIME_WAIT sockets.
        guard setOption(fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1) else {
            throw HTTPServerError(.socketFailed, "setsockopt(SO_REUSEADDR) failed", errno: errno)
        }
        if case .v6 = address {
            guard setOption(fd, level: Int32(IPPROTO_IPV6), name: IPV6_V6ONLY, value: 1) else {
                throw HTTPServerError(.socketFailed, "setsockopt(IPV6_V6ONLY) failed", errno: errno)
            }
        }
        let bound = address.withSocketAddress(port: port) { Glibc.bind(fd, $0, $1) }
        guard bound == 0 else {
            let code = errno
            throw HTTPServerError(
                .bindFailed,
                "cannot bind \(address.urlHost):\(port)"
                    + (code == EADDRINUSE ? "; the port is in use, choose another or use 0" : ""), errno: code)
        }
        guard Glibc.listen(fd, Int32(clamping: backlog)) == 0 else {
            throw HTTPServerError(.listenFailed, "listen() failed", errno: errno)
        }
        return listener
    }

    /// The local port (host byte order) the socket is bound to.
    func boundPort() throws(HTTPServerError) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else {
            throw HTTPServerError(.listenFailed, "getsockname() failed", errno: errno)
        }
        guard let (_, port) = HTTPIPAddress.from(storage: storage) else {
            throw HTTPServerError(.listenFailed, "getsockname() returned an unexpected address family")
        }
        return port
    }
}

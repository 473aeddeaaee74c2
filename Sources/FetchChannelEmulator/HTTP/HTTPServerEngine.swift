internal import CDeviceSigningShim
import DeviceSigning
import Dispatch
import Glibc

/// The running part of an `HTTPServer`: the listener, the accept thread, the connection threads and
/// their bookkeeping.
///
/// Kept apart from the public `HTTPServer` so that server threads reference only the engine: the
/// public object can then be released while the server runs, and its deinit stops the engine.
/// All mutable state is behind one lock; threads are spawned while holding it so that a thread is
/// registered before it can finish.
final class HTTPServerEngine: Sendable {
    let configuration: HTTPServer.Configuration
    let handler: @Sendable (HTTPRequest) -> HTTPServerAction

    private let state = Locked(State())
    /// Entered while a stop is in progress, so a concurrent stop() can wait for it to finish.
    private let stopInProgress = DispatchGroup()

    /// How often the accept thread wakes to join finished connection threads when no client connects.
    private static let reapInterval: Duration = .seconds(1)
    /// Pause after accept() fails for lack of descriptors or memory, instead of spinning on it.
    private static let acceptBackoff: Duration = .milliseconds(100)

    private struct State: Sendable {
        enum Phase { case idle, running, stopping, stopped }

        var phase = Phase.idle
        var address: HTTPServerAddress?
        var stopSignal: HTTPStopSignal?
        var acceptThread: pthread_t?
        /// Connection threads not joined yet (running or finished), by connection id.
        var connectionThreads: [Int: pthread_t] = [:]
        /// Connection ids whose threads finished and wait to be joined.
        var finishedConnections: [Int] = []
        /// The slots of the connections being served, by connection id: which of them wait idle.
        var slots: [Int: HTTPConnectionSlot] = [:]
        /// Every server thread whose body has not returned: stop() called on one of them must not wait for itself.
        var liveThreadIDs: Set<pthread_t> = []
        var nextConnectionID = 0
        var statistics = HTTPServerStatistics()
    }

    init(configuration: HTTPServer.Configuration, handler: @escaping @Sendable (HTTPRequest) -> HTTPServerAction) {
        self.configuration = configuration
        self.handler = handler
    }

    var statistics: HTTPServerStatistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.idleConnections = state.slots.values.count { $0.idleSince != nil }
            return statistics
        }
    }

    var address: HTTPServerAddress? {
        state.withLock { $0.address }
    }

    func recordRequest() {
        state.withLock { $0.statistics.totalRequests += 1 }
    }

    // MARK: - Start

    /// Binds and listens, calls `beforeAccepting` with the address, then starts the accept thread.
    func start(beforeAccepting: (HTTPServerAddress) -> Void) throws(HTTPServerError) -> HTTPServerAddress {
        try configuration.validate()
        guard let ip = HTTPIPAddress(literal: configuration.host) else {
            throw HTTPServerError(
                .invalidHost, "host \"\(configuration.host)\" is not a numeric IPv4/IPv6 address or localhost")
        }
        guard ip.isLoopback || configuration.allowNonLoopback else {
            throw HTTPServerError(
                .nonLoopbackHost,
                "host \(configuration.host) is not loopback; use 127.0.0.1 or ::1, or set allowNonLoopback to expose the emulator"
            )
        }
        return try state.withLock { (state: inout State) throws(HTTPServerError) -> HTTPServerAddress in
            switch state.phase {
            case .idle: break
            case .running:
                throw HTTPServerError(
                    .alreadyStarted, "the server is already running at \(state.address?.description ?? "?")")
            case .stopping, .stopped:
                throw HTTPServerError(.alreadyStopped, "a stopped server cannot be restarted; create a new HTTPServer")
            }
            let listener = try HTTPSocket.listen(
                on: ip, port: UInt16(configuration.port), backlog: configuration.listenBacklog)
            let address = try HTTPServerAddress(
                scheme: configuration.tlsIdentity == nil ? "http" : "https",
                host: ip.numericString, urlHost: ip.urlHost, port: try listener.boundPort())
            if configuration.tlsIdentity != nil {
                // libssl writes with write(2), not send(MSG_NOSIGNAL): a client that left would
                // raise SIGPIPE and kill the process (docs/ARCHITECTURE.md, "Transport and trust").
                signal(SIGPIPE, SIG_IGN)
            }
            let signal = try HTTPStopSignal()
            // Connections wait in the listen queue until the accept thread takes them.
            beforeAccepting(address)
            let listenFD = listener.releaseOwnership()
            let spawned = HTTPServerThread.spawn(stackSize: configuration.threadStackSize) { [self] in
                runAcceptThread(listenFD: listenFD, stop: signal)
            }
            switch spawned {
            case .success(let thread):
                state.phase = .running
                state.address = address
                state.stopSignal = signal
                state.acceptThread = thread
                state.liveThreadIDs.insert(thread)
                state.statistics.liveThreads += 1
                return address
            case .failure(let error):
                HTTPSocket(adopting: listenFD).close()
                throw error
            }
        }
    }

    // MARK: - Stop

    func stop() {
        enum Plan {
            case nothing, waitForOtherStop
            case stop(acceptThread: pthread_t?)
        }
        let me = pthread_self()
        let plan = state.withLock { state -> Plan in
            switch state.phase {
            case .idle:
                state.phase = .stopped
                return .nothing
            case .stopped:
                return .nothing
            case .stopping:
                // A server thread (a handler calling stop) must not wait: the stopper may be joining it.
                return state.liveThreadIDs.contains(me) ? .nothing : .waitForOtherStop
            case .running:
                state.phase = .stopping
                stopInProgress.enter()
                state.stopSignal?.signal()
                return .stop(acceptThread: state.acceptThread)
            }
        }
        switch plan {
        case .nothing:
            return
        case .waitForOtherStop:
            stopInProgress.wait()
        case .stop(let acceptThread):
            // The accept thread first, so that no connection thread is added after the list is taken.
            if let acceptThread {
                HTTPServerThread.join(acceptThread)
            }
            let connectionThreads = state.withLock { state -> [pthread_t] in
                let threads = Array(state.connectionThreads.values)
                state.connectionThreads.removeAll()
                state.finishedConnections.removeAll()
                state.acceptThread = nil
                return threads
            }
            // join() detaches instead when stop() runs on one of these threads (a handler).
            connectionThreads.forEach(HTTPServerThread.join)
            state.withLock { state in
                // Dropping the last reference closes the stop pipe (unless a detached caller thread still runs).
                state.stopSignal = nil
                state.phase = .stopped
            }
            stopInProgress.leave()
        }
    }

    // MARK: - Accept thread

    private func runAcceptThread(listenFD: Int32, stop: HTTPStopSignal) {
        let listener = HTTPSocket(adopting: listenFD)
        acceptLoop(listener, stop: stop)
        listener.close()
        finishThread()
    }

    private func acceptLoop(_ listener: borrowing HTTPSocket, stop: HTTPStopSignal) {
        while true {
            let outcome = HTTPPoll.wait(
                fd: listener.fd, events: Int16(POLLIN), stop: stop,
                deadline: ContinuousClock.now + Self.reapInterval)
            switch outcome {
            case .stopped:
                return
            case .timedOut:
                break
            case .ready(let events) where events & Int16(POLLERR | POLLNVAL) != 0:
                if !backOff(stop: stop) { return }  // Should not happen; never spin on it.
            case .ready:
                if !acceptPending(listener, stop: stop) { return }
            case .failed:
                if !backOff(stop: stop) { return }
            }
            joinFinishedConnections()
        }
    }

    /// Accepts the connections waiting in the backlog (a bounded batch). False when stopped.
    private func acceptPending(_ listener: borrowing HTTPSocket, stop: HTTPStopSignal) -> Bool {
        for _ in 0..<64 {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    dss_accept_cloexec_nonblocking(listener.fd, $0, &length)
                }
            }
            guard fd >= 0 else {
                switch -fd {
                case EINTR, ECONNABORTED, EPROTO:
                    continue  // This client gave up; others may wait.
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    return backOff(stop: stop)  // Out of resources: let them free up instead of spinning.
                default:
                    return true  // EAGAIN: the backlog is empty.
                }
            }
            // Close-on-exec and non-blocking from the start (see dss_descriptors.h).
            let socket = HTTPSocket(adopting: fd)
            // Answers are written in one send; without TCP_NODELAY a pipelining client could
            // still meet Nagle's delay. Failure only costs latency.
            if !HTTPSocket.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1) {
                assert(errno != EBADF, "TCP_NODELAY on a closed descriptor")
            }
            let peer =
                HTTPIPAddress.from(storage: storage).map {
                    HTTPPeerAddress(host: $0.address.numericString, port: $0.port)
                } ?? HTTPPeerAddress(host: "unknown", port: 0)
            serveOrReject(socket, peer: peer, stop: stop)
        }
        return true
    }

    /// Hands the connection to a new thread. When `maxConnections` are served already, the least
    /// recently used idle one is closed to make room; when none is idle (or a thread cannot be
    /// created) the new connection is answered 503 and closed.
    private func serveOrReject(_ socket: consuming HTTPSocket, peer: HTTPPeerAddress, stop: HTTPStopSignal) {
        let fd = socket.releaseOwnership()
        let served = state.withLock { state -> Bool in
            state.statistics.totalAccepted += 1
            let hasRoom = state.statistics.openConnections < configuration.maxConnections
            guard state.phase == .running, hasRoom || Self.evictLeastRecentlyUsed(&state) else {
                state.statistics.rejectedConnections += 1
                return false
            }
            let id = state.nextConnectionID
            state.nextConnectionID += 1
            let slot = HTTPConnectionSlot(fd: fd)
            let spawned = HTTPServerThread.spawn(stackSize: configuration.threadStackSize) { [self] in
                runConnectionThread(id: id, fd: fd, slot: slot, peer: peer, stop: stop)
            }
            guard case .success(let thread) = spawned else {
                state.statistics.rejectedConnections += 1
                return false
            }
            state.slots[id] = slot
            state.connectionThreads[id] = thread
            state.liveThreadIDs.insert(thread)
            state.statistics.openConnections += 1
            state.statistics.liveThreads += 1
            return true
        }
        if !served {
            reject(HTTPSocket(adopting: fd))
        }
    }

    /// Shuts down the connection that has been idle the longest (its thread then finishes on its
    /// own) and stops counting it as open; false when no connection waits idle.
    private static func evictLeastRecentlyUsed(_ state: inout State) -> Bool {
        let idle = state.slots.values.compactMap { slot in slot.idleSince.map { (slot, $0) } }.sorted { $0.1 < $1.1 }
        for (slot, _) in idle where slot.evictIfIdle() {
            state.statistics.openConnections -= 1
            state.statistics.evictedConnections += 1
            return true
        }
        return false
    }

    /// 503 without ever blocking the accept thread: drop what the client already sent (so the
    /// close is less likely to reset the connection), one non-blocking write, half-close, close.
    /// Over TLS nothing is written: plaintext in answer to a ClientHello is not TLS, and a
    /// handshake per refusal would spend on the accept thread what the cap protects.
    private func reject(_ socket: consuming HTTPSocket) {
        socket.discardAvailable(limit: 64 * 1024)
        if configuration.tlsIdentity == nil {
            let answer = HTTPResponseSerializer.serialize(
                HTTPResponse.serverError(
                    status: 503,
                    reason: "the server is serving its maximum of \(configuration.maxConnections) connections"),
                dateMillis: configuration.clock(), omitBody: false, connection: .close)
            socket.sendWithoutWaiting(answer)
        }
        if shutdown(socket.fd, Int32(SHUT_WR)) != 0 {
            assert(errno != EBADF, "shutdown on a closed descriptor")  // ENOTCONN: the client left.
        }
        socket.close()
    }

    /// Waits `acceptBackoff` unless stopped; false when stopped.
    private func backOff(stop: HTTPStopSignal) -> Bool {
        HTTPPoll.wait(fd: -1, events: 0, stop: stop, deadline: ContinuousClock.now + Self.acceptBackoff) != .stopped
    }

    private func joinFinishedConnections() {
        let threads = state.withLock { state -> [pthread_t] in
            let threads = state.finishedConnections.compactMap { state.connectionThreads.removeValue(forKey: $0) }
            state.finishedConnections.removeAll()
            return threads
        }
        threads.forEach(HTTPServerThread.join)
    }

    // MARK: - Connection threads

    private func runConnectionThread(
        id: Int, fd: Int32, slot: HTTPConnectionSlot, peer: HTTPPeerAddress,
        stop: HTTPStopSignal
    ) {
        let socket = HTTPSocket(adopting: fd)
        var connection = HTTPConnection(engine: self, stop: stop, peer: peer, slot: slot)
        if let identity = configuration.tlsIdentity {
            if let session = connection.acceptTLS(identity, on: socket) {
                connection.run(on: session)
                session.sendCloseNotify(until: nil, stop: stop)
            }
        } else {
            connection.run(on: socket)
        }
        let evicted = slot.retire()
        socket.close()
        state.withLock { state in
            state.slots[id] = nil
            if !evicted {
                state.statistics.openConnections -= 1  // An evicted connection stopped counting then.
            }
            state.finishedConnections.append(id)
        }
        finishThread()
    }

    /// The last thing a server thread does: after this only its return remains, which join() awaits.
    private func finishThread() {
        let me = pthread_self()
        state.withLock { state in
            state.liveThreadIDs.remove(me)
            state.statistics.liveThreads -= 1
        }
    }
}

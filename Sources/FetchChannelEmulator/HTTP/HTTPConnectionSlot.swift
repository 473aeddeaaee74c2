import DeviceSigning
import Glibc

/// What the accept thread may know and do about one served connection: whether it waits idle for
/// a request and since when, so that at the connection cap the least recently used idle connection
/// can be closed to admit a new client (docs/ARCHITECTURE.md, "Invariants"). Without that, one
/// client holding idle sockets would keep every other client out until the idle timeout.
///
/// The descriptor stays owned by the connection thread. The slot only shuts it down, under its
/// lock, and never after `retire()`, which the connection thread calls before it closes the
/// descriptor: a shutdown can therefore never hit a descriptor number that was reused meanwhile.
final class HTTPConnectionSlot: Sendable {
    private enum Phase: Sendable {
        case busy
        /// Waiting for the first byte of a request; `since` is the connection's last activity.
        case idle(since: ContinuousClock.Instant)
        case evicted
        case retired
    }

    private let fd: Int32
    private let phase = Locked(Phase.busy)

    init(fd: Int32) {
        self.fd = fd
    }

    /// The connection waits for the first byte of a request; it was last active at `since`.
    func becomeIdle(since: ContinuousClock.Instant) {
        phase.withLock { phase in
            if case .busy = phase { phase = .idle(since: since) }
        }
    }

    /// The connection stopped waiting. False when it was evicted meanwhile: it must close.
    func becomeBusy() -> Bool {
        phase.withLock { phase in
            switch phase {
            case .busy, .idle:
                phase = .busy
                return true
            case .evicted, .retired:
                return false
            }
        }
    }

    /// When the connection was last active, if it waits idle now.
    var idleSince: ContinuousClock.Instant? {
        phase.withLock { phase in
            if case .idle(let since) = phase { return since }
            return nil
        }
    }

    /// Shuts the connection down if it still waits idle and no byte of a request is buffered;
    /// true if it did. The connection thread then reads the end of the stream and closes.
    func evictIfIdle() -> Bool {
        phase.withLock { phase in
            guard case .idle = phase, !hasBufferedInput() else { return false }
            // The read side only: the connection thread wakes and closes as after an idle
            // timeout, a TLS connection with its close_notify first, so its client reads a clean
            // end of the stream (shutting the write side here lost the close_notify).
            if shutdown(fd, Int32(SHUT_RD)) != 0 {
                assert(errno != EBADF, "shutdown on a closed descriptor")  // ENOTCONN: the client left.
            }
            phase = .evicted
            return true
        }
    }

    /// Called by the connection thread before it closes the descriptor. Whether it was evicted.
    func retire() -> Bool {
        phase.withLock { phase in
            let evicted = if case .evicted = phase { true } else { false }
            phase = .retired
            return evicted
        }
    }

    /// Whether a byte waits in the receive buffer: a request that arrived but was not read yet.
    private func hasBufferedInput() -> Bool {
        var byte: UInt8 = 0
        while true {
            let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            if count < 0 && errno == EINTR { continue }
            return count > 0  // 0: the client closed; -1: nothing buffered (EAGAIN) or a dead socket.
        }
    }
}

import Glibc

/// Every blocking wait of the server: `poll()` on one descriptor plus the stop signal, with a deadline.
///
/// Waiting on the stop signal in the same call is what lets stop() interrupt a blocked accept,
/// read, write, delay or hang at once, without closing descriptors under another thread's feet.
enum HTTPPoll {
    enum Outcome: Equatable {
        /// `fd` reported these events (POLLIN, POLLOUT, POLLHUP, POLLERR, ...).
        case ready(Int16)
        case timedOut
        /// The stop signal fired; checked before `fd` so that stopping wins over work.
        case stopped
        case failed(Int32)
    }

    /// POLLRDHUP (peer shut down its sending side). Linux-only; Glibc's Swift module hides it
    /// behind _GNU_SOURCE, so the value from <bits/poll.h> is spelled out here.
    static let readHangUp: Int16 = 0x2000

    /// Waits for `events` on `fd` (pass -1 to wait only for the stop signal or the deadline).
    /// A nil deadline waits without a time limit.
    static func wait(fd: Int32, events: Int16, stop: HTTPStopSignal, deadline: ContinuousClock.Instant?) -> Outcome {
        var descriptors = [
            pollfd(fd: stop.readFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: fd, events: events, revents: 0),
        ]
        while true {
            let timeout = deadline.map(millisecondsUntil) ?? -1
            let result = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if result < 0 {
                let code = errno
                if code == EINTR { continue }
                return .failed(code)
            }
            if descriptors[0].revents != 0 {
                return .stopped
            }
            if descriptors[1].revents != 0 {
                return .ready(descriptors[1].revents)
            }
            if let deadline, ContinuousClock.now >= deadline {
                return .timedOut
            }
            // poll() woke early (rounding); wait for the rest.
        }
    }

    /// Milliseconds left until `deadline`, rounded up so poll() never returns before it, capped for Int32.
    static func millisecondsUntil(_ deadline: ContinuousClock.Instant) -> Int32 {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        guard seconds < Int64(Int32.max / 1000) else { return .max }  // also keeps `seconds * 1000` from overflowing
        let millis = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: millis)
    }
}

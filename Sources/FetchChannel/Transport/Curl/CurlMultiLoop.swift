#if os(Linux)
    internal import CCurl
    internal import CCurlShim
    import DeviceSigning
    import Foundation

    /// One libcurl multi handle, used through its socket interface (`curl_multi_socket_action`),
    /// and the one thread that waits for its sockets.
    ///
    /// Every transfer of a ``CurlTransport`` runs here, concurrently, and the multi handle keeps the
    /// connections: a backend asked again reuses its kept-alive connection (HTTP/1.1 keep-alive, TLS
    /// session included).
    ///
    /// The multi handle is used by one thread at a time, as libcurl requires: whoever holds the
    /// lock. A caller adds its transfer and starts it itself, so on a kept-alive connection the
    /// request is written before `submit` returns, without waking the loop's thread; a cancelled
    /// caller removes its transfer the same way. The loop's thread sleeps, without the lock, in
    /// `epoll_wait` on the sockets libcurl asks to watch (``CurlSocketCallbacks``), a timerfd set
    /// to libcurl's next timeout and an eventfd that only ``shutdown()`` signals; it wakes when an
    /// answer arrives, a socket can be written or a timeout is due, and then drives libcurl under
    /// the lock. So a request costs the threads one wake-up beside the answer's: the caller's,
    /// when its transfer ends (docs/ARCHITECTURE.md, "Threads").
    ///
    /// Each submitted transfer's continuation is resumed exactly once: it lives in one place at a
    /// time (the table of running transfers, then a list of results taken out under the lock) and
    /// is resumed, outside the lock, when it is taken out of there. ``shutdown()`` ends every
    /// running transfer as cancelled and frees the multi handle on the thread; a transfer
    /// submitted after that is answered at once.
    final class CurlMultiLoop: Sendable {
        /// Kept-alive connections at most, over all backends (least recently used closed first).
        static let maximumIdleConnections = 64

        /// The loop's longest sleep unless a test asks for another (``start(name:longestSleep:)``).
        static let defaultLongestSleep = Duration.seconds(5)

        /// Everything libcurl's multi handle needs; reached only through the lock.
        private let state: Locked<CurlMultiState>
        /// The longest the thread sleeps without an event; then it runs libcurl's timeouts anyway.
        /// Only a safety net: libcurl's timeouts are in the timerfd.
        private let longestSleepMilliseconds: Int32

        private init(state: CurlMultiState, longestSleep: Duration) {
            self.state = Locked(state)
            longestSleepMilliseconds = Int32(clamping: CurlRequestOptions.timeoutMilliseconds(longestSleep))
        }

        /// A running loop, or why there is none. `epollWatch` adds or changes a socket in the
        /// epoll set; a test hands in one that fails. `spawn` starts the loop's thread and says
        /// whether it could (a test hands in one that cannot): a loop whose thread never ran would
        /// leave every request waiting, unanswered and with no timer running.
        static func start(
            name: String, longestSleep: Duration = defaultLongestSleep,
            epollWatch: @escaping CurlMultiState.EpollWatch = CurlMultiState.systemEpollWatch,
            spawn: BlockingWork.Spawn = BlockingWork.startDetachedThread
        ) -> Result<CurlMultiLoop, NetworkFailure> {
            guard CurlGlobal.initialized else {
                return .failure(
                    NetworkFailure(.other, detail: "libcurl could not be initialised (\(CurlGlobal.problem))"))
            }
            let state: CurlMultiState
            switch CurlMultiState.make(epollWatch: epollWatch) {
            case .success(let made): state = made
            case .failure(let failure): return .failure(failure)
            }
            let loop = CurlMultiLoop(state: state, longestSleep: longestSleep)
            // Not Foundation's `Thread.start()`, which reports no failure to make a thread.
            let started = spawn {
                Thread.current.name = name
                loop.run()
            }
            guard started else {
                loop.state.withLock { $0.close() }
                return .failure(NetworkFailure(.other, detail: "the transport could not start its thread"))
            }
            return .success(loop)
        }

        // MARK: Any thread

        /// Runs `transfer`; `continuation` gets its result, once. A transfer cancelled before it
        /// was submitted is never started: nothing of it reaches the network.
        func submit(_ transfer: CurlTransfer, continuation: CheckedContinuation<TransportResult, Never>) {
            let ended = state.withLock { state -> [CurlMultiState.Ended] in
                guard !state.stopRequested else {
                    return [(continuation, .failure(NetworkFailure(.cancelled, detail: "the transport was shut down")))]
                }
                guard !transfer.cancelRequested else {
                    return [(continuation, .failure(NetworkFailure(.cancelled, detail: "cancelled before sending")))]
                }
                state.add(transfer, continuation: continuation)
                return state.takeEnded()
            }
            Self.resume(ended)
        }

        /// Ends `transfer` as cancelled if it is still running; one not submitted yet is marked, so
        /// that its submission does not start it. Nothing for a transfer that has ended.
        func cancel(_ transfer: CurlTransfer) {
            let ended = state.withLock { state -> [CurlMultiState.Ended] in
                transfer.cancelRequested = true
                state.finish(
                    transfer.easy, with: .failure(NetworkFailure(.cancelled, detail: "the request was cancelled")))
                return state.takeEnded()
            }
            Self.resume(ended)
        }

        /// Ends the loop: running transfers end as cancelled, connections are closed, the multi
        /// handle is freed. Returns at once; the thread finishes on its own.
        func shutdown() {
            state.withLock { state in
                guard !state.stopRequested else { return }
                state.stopRequested = true
                // Signalled under the lock, so the thread cannot have closed the eventfd meanwhile.
                // It fails only for a closed descriptor; the thread then has stopped already.
                _ = fcc_wake_signal(state.events.wake)
            }
        }

        private static func resume(_ ended: [CurlMultiState.Ended]) {
            for (continuation, result) in ended { continuation.resume(returning: result) }
        }

        // MARK: The loop's thread

        private func run() {
            let capacity = 64
            var fds = [Int32](repeating: -1, count: capacity)
            var actions = [Int32](repeating: 0, count: capacity)
            let epoll = state.withLock { $0.events.epoll }
            while true {
                // Sleeps without the lock.
                let count = fcc_epoll_wait(epoll, &fds, &actions, Int32(capacity), longestSleepMilliseconds)
                let (ended, stopping) = state.withLock { state -> ([CurlMultiState.Ended], Bool) in
                    guard !state.stopRequested else { return ([], true) }
                    if count < 0 {
                        // Only a broken epoll set fails so (EINTR is not a failure): nothing could be
                        // waited for again, so the transport ends rather than leave callers hanging.
                        state.failAll(NetworkFailure(.other, detail: "epoll_wait failed (errno \(-count))"))
                        state.stopRequested = true
                        return ([], true)
                    }
                    for index in 0..<max(0, Int(count)) {
                        state.ready(fds[index], actions: actions[index])
                    }
                    if count == 0 { state.timeoutDue = true }
                    state.settle()
                    return (state.takeEnded(), false)
                }
                Self.resume(ended)
                if stopping { break }
            }
            let ended = state.withLock { state -> [CurlMultiState.Ended] in
                state.close()
                return state.takeEnded()
            }
            Self.resume(ended)
        }
    }

    /// The multi handle and what drives it: the transfers that run, the epoll set, the timer and
    /// whether libcurl asked for its timeout to be run. Used only by the thread that holds the
    /// ``CurlMultiLoop``'s lock; libcurl's callbacks (``CurlSocketCallbacks``) reach it inside the
    /// libcurl calls made here, so under the same lock.
    final class CurlMultiState {
        /// A continuation and its result, resumed by the loop after it let go of the lock.
        typealias Ended = (CheckedContinuation<TransportResult, Never>, TransportResult)
        /// `fcc_epoll_watch`'s shape: (epoll set, socket, CURL_POLL_* value, is new) -> 0 or -errno.
        typealias EpollWatch = @Sendable (Int32, curl_socket_t, Int32, Int32) -> Int32
        /// The real one, for a test's stand-in to hand on to.
        static let systemEpollWatch: EpollWatch = { fcc_epoll_watch($0, $1, $2, $3) }

        private struct Running {
            let transfer: CurlTransfer
            let continuation: CheckedContinuation<TransportResult, Never>
        }

        /// The multi handle (`CURLM *`), owned; freed by ``close()``.
        private let multi: UnsafeMutableRawPointer
        let events: CurlLoopEvents
        private var running: [UnsafeMutableRawPointer: Running] = [:]
        private var ended: [Ended] = []
        var stopRequested = false
        /// libcurl's timeout is to be run when the current call returns (it may not be called from
        /// inside its own callback): its timer said 0 ms, the timerfd fired, or a transfer was added.
        var timeoutDue = false
        /// libcurl's next timeout may have moved: the timerfd is checked against it (``syncTimer()``).
        private var timerIsStale = false
        /// When the timerfd fires (CLOCK_MONOTONIC milliseconds); nil when it is not armed.
        private var timerFiresAt: Int64?
        /// The sockets in the epoll set and what each is watched for, as libcurl last asked.
        private var watched: [curl_socket_t: Int32] = [:]
        private let epollWatch: EpollWatch
        /// Transfers whose socket epoll refused to watch, and its errno: each ends once the libcurl
        /// call that asked for the watch has returned (``watch(_:what:for:)``).
        private var unwatchable: [(easy: UnsafeMutableRawPointer, errno: Int32)] = []
        private var closed = false

        private init(multi: UnsafeMutableRawPointer, events: CurlLoopEvents, epollWatch: @escaping EpollWatch) {
            self.multi = multi
            self.events = events
            self.epollWatch = epollWatch
        }

        /// A multi handle with its descriptors and callbacks, or why not (nothing is left open).
        static func make(epollWatch: @escaping EpollWatch) -> Result<CurlMultiState, NetworkFailure> {
            let events: CurlLoopEvents
            switch CurlLoopEvents.open() {
            case .success(let opened): events = opened
            case .failure(let failure): return .failure(failure)
            }
            guard let multi = curl_multi_init() else {
                events.close()
                return .failure(NetworkFailure(.other, detail: "libcurl could not make a multi handle"))
            }
            let state = CurlMultiState(multi: multi, events: events, epollWatch: epollWatch)
            if let failure = state.configure() {
                _ = curl_multi_cleanup(multi)  // its code only reports a bad handle; nothing else to free
                events.close()
                return .failure(failure)
            }
            return .success(state)
        }

        /// The connection limit and the callbacks, whose context is this state, unretained: the
        /// loop holds it for as long as the multi handle lives.
        private func configure() -> NetworkFailure? {
            let context = Unmanaged.passUnretained(self).toOpaque()
            let settings: [(String, CURLMcode)] = [
                (
                    "CURLMOPT_MAXCONNECTS",
                    fcc_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, CurlMultiLoop.maximumIdleConnections)
                ),
                ("CURLMOPT_SOCKETFUNCTION", fcc_multi_setopt_socket_callback(multi, CurlSocketCallbacks.socket)),
                ("CURLMOPT_SOCKETDATA", fcc_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, context)),
                ("CURLMOPT_TIMERFUNCTION", fcc_multi_setopt_timer_callback(multi, CurlSocketCallbacks.timer)),
                ("CURLMOPT_TIMERDATA", fcc_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, context)),
            ]
            guard let (option, code) = settings.first(where: { $0.1 != CURLM_OK }) else { return nil }
            return NetworkFailure(.other, detail: "libcurl refused \(option): \(CurlGlobal.text(of: code))")
        }

        /// Adds `transfer` and starts it: on a kept-alive connection its request is written now.
        func add(_ transfer: CurlTransfer, continuation: CheckedContinuation<TransportResult, Never>) {
            // libcurl counts CURLOPT_TIMEOUT_MS from here, so the time since the caller asked (the
            // options, a CA file read, waiting for this lock behind another connection's handshake)
            // is taken off first: the timeout ends when the caller's time is up.
            let left = transfer.timeout - (ContinuousClock.now - transfer.requestedAt)
            guard left > .zero else {
                let detail =
                    "no complete answer within \(transfer.timeout) (it ran out before the request could be sent)"
                ended.append((continuation, .failure(NetworkFailure(.timedOut, detail: detail))))
                return
            }
            do {
                try transfer.set(CURLOPT_TIMEOUT_MS, CurlRequestOptions.timeoutMilliseconds(left))
            } catch {
                ended.append((continuation, .failure(error)))
                return
            }
            let added = curl_multi_add_handle(multi, transfer.easy)
            guard added == CURLM_OK else {
                let detail = "libcurl could not start the request: \(CurlGlobal.text(of: added))"
                ended.append((continuation, .failure(NetworkFailure(.other, detail: detail))))
                return
            }
            running[transfer.easy] = Running(transfer: transfer, continuation: continuation)
            // Adding sets a timeout of 0 ms, which starts the transfer; run it whether or not the
            // timer callback said so.
            timeoutDue = true
            settle()
        }

        /// A descriptor epoll reported ready: the wake-up, the timer or one of libcurl's sockets.
        func ready(_ fd: Int32, actions: Int32) {
            if fd == events.wake {
                _ = fcc_descriptor_drain(fd)  // only shutdown() signals it; stopRequested says the rest
            } else if fd == events.timer {
                _ = fcc_descriptor_drain(fd)
                timerFiresAt = nil
                timeoutDue = true
                timerIsStale = true
            } else {
                act(on: fd, actions: actions)
            }
        }

        /// Runs libcurl's due timeouts until none is due, sets the timerfd for the next one, then
        /// collects the transfers that ended.
        func settle() {
            repeat {
                while timeoutDue {
                    timeoutDue = false
                    act(on: CURL_SOCKET_TIMEOUT, actions: 0)
                }
                if timerIsStale { syncTimer() }
            } while timeoutDue
            collectFinished()
        }

        /// Arms the timerfd for libcurl's next timeout (`curl_multi_timeout`), unless it already
        /// fires no later. A timer left armed by an earlier transfer fires early at worst, which
        /// only makes libcurl look, find nothing due and announce its next timeout again; so a run
        /// of requests sets the timer about once per timeout period rather than twice per request.
        private func syncTimer() {
            timerIsStale = false
            var milliseconds = -1
            guard curl_multi_timeout(multi, &milliseconds) == CURLM_OK, milliseconds >= 0 else { return }
            guard milliseconds > 0 else {
                timeoutDue = true
                return
            }
            let now = fcc_monotonic_milliseconds()
            let due = now + Int64(milliseconds)
            if let firesAt = timerFiresAt, firesAt > now, firesAt <= due { return }
            if fcc_timer_set(events.timer, milliseconds) == 0 {
                timerFiresAt = due
            } else {
                // Never seen: without the timer, the loop's longest sleep bounds libcurl's timeouts.
                timerFiresAt = nil
            }
        }

        private func act(on socket: curl_socket_t, actions: Int32) {
            var stillRunning: Int32 = 0
            let acted = curl_multi_socket_action(multi, socket, actions, &stillRunning)
            if acted != CURLM_OK {
                failAll(NetworkFailure(.other, detail: "libcurl: \(CurlGlobal.text(of: acted))"))
            }
            endUnwatchable()
        }

        /// Ends each transfer whose socket could not be watched: nothing would wake the loop for
        /// it. Its connection is closed as it is taken out of the multi handle.
        private func endUnwatchable() {
            while !unwatchable.isEmpty {
                let (easy, errno) = unwatchable.removeFirst()
                let detail = "the transport could not watch the connection's socket (epoll, errno \(errno))"
                finish(easy, with: .failure(NetworkFailure(.other, detail: detail)))
            }
        }

        /// The results ready to be resumed, taken out.
        func takeEnded() -> [Ended] {
            defer { ended.removeAll() }
            return ended
        }

        /// Every transfer libcurl reports done.
        private func collectFinished() {
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                    let entry = running[easy]
                else { continue }
                finish(easy, with: entry.transfer.result(for: message.pointee.data.result))
            }
        }

        func failAll(_ failure: NetworkFailure) {
            for easy in Array(running.keys) { finish(easy, with: .failure(failure)) }
        }

        /// Takes the transfer out of the multi handle; its caller is resumed with `result` after
        /// the lock is released. Nothing when it is not running (already finished, or a cancel
        /// that came after its end).
        func finish(_ easy: UnsafeMutableRawPointer, with result: TransportResult) {
            guard let entry = running.removeValue(forKey: easy) else { return }
            let removed = curl_multi_remove_handle(multi, easy)
            if removed != CURLM_OK {
                // The multi handle may still use the easy handle: keep it alive (a small leak) rather
                // than free memory libcurl could touch.
                Self.unremovable.withLock { $0.append(entry.transfer) }
            }
            ended.append((entry.continuation, result))
        }

        /// Ends every running transfer as cancelled, closes the connections, frees the multi
        /// handle and closes the descriptors. Once.
        func close() {
            guard !closed else { return }
            closed = true
            failAll(NetworkFailure(.cancelled, detail: "the transport was shut down"))
            // Closes every kept-alive connection (libcurl unwatches their sockets through the
            // callback first). Its code only reports a bad handle; nothing is left to free.
            _ = curl_multi_cleanup(multi)
            events.close()
        }

        // MARK: libcurl's callbacks, inside the calls above

        /// CURLMOPT_SOCKETFUNCTION: watch `socket` for `what` for the transfer `easy`, or stop
        /// watching it.
        ///
        /// An epoll error ends only that transfer, after the current libcurl call
        /// (``endUnwatchable()``). It is not returned to libcurl: a callback's -1 makes libcurl
        /// abort every transfer of the multi handle, those to other backends included.
        ///
        /// A removed socket leaves the set at once, even though libcurl removes a kept-alive
        /// connection's socket after every transfer and adds it again at the next: libcurl may
        /// close it next, and a closed descriptor whose number is reused cannot be taken out of
        /// an epoll set by that number while another process still holds the old socket (a child
        /// started meanwhile, say), which would wake the loop for nothing until that process ends.
        func watch(_ socket: curl_socket_t, what: Int32, for easy: UnsafeMutableRawPointer?) -> Int32 {
            guard what != CURL_POLL_REMOVE else {
                watched[socket] = nil
                // Only a socket already gone from the set fails so; libcurl closes it next anyway.
                _ = fcc_epoll_unwatch(events.epoll, socket)
                return 0
            }
            let known = watched[socket]
            if known == what { return 0 }
            let code = epollWatch(events.epoll, socket, what, known == nil ? 1 : 0)
            guard code == 0 else {
                watched[socket] = nil
                if let easy, running[easy] != nil { unwatchable.append((easy, -code)) }
                return 0
            }
            watched[socket] = what
            return 0
        }

        /// CURLMOPT_TIMERFUNCTION: 0 runs the timeout when the current call returns; any other
        /// value only says that the timerfd is to be checked then (``syncTimer()``).
        func schedule(timeoutMilliseconds: Int) -> Int32 {
            if timeoutMilliseconds == 0 { timeoutDue = true }
            timerIsStale = true
            return 0
        }

        /// Transfers libcurl would not take back (never seen; see `finish`).
        private static let unremovable = Locked<[CurlTransfer]>([])
    }
#endif

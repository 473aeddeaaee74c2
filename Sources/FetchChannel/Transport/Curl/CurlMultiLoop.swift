#if os(Linux)
    internal import CCurl
    internal import CCurlShim
    import DeviceSigning
    import Foundation

    /// One libcurl multi handle and the one thread that drives it.
    ///
    /// Every transfer of a ``CurlTransport`` runs here, concurrently, and the multi handle keeps the
    /// connections: a backend asked again reuses its kept-alive connection (HTTP/1.1 keep-alive, TLS
    /// session included). Other threads never call libcurl on the multi handle; they put a command
    /// in the locked inbox and wake the thread with `curl_multi_wakeup`, the one call libcurl allows
    /// from any thread. The thread runs commands, `curl_multi_perform`, finished transfers, then
    /// sleeps in `curl_multi_poll` until a socket, a libcurl timer or a wake-up needs it.
    ///
    /// Each submitted transfer's continuation is resumed exactly once: it lives in one place at a
    /// time (the command, then the thread's table of running transfers) and is resumed when it is
    /// taken out of there. ``shutdown()`` ends every running transfer as cancelled and frees the
    /// multi handle on the thread; a transfer submitted after that is answered at once.
    final class CurlMultiLoop: @unchecked Sendable {
        // @unchecked: `multi` is used by the loop's thread only, except curl_multi_wakeup, which is
        // called with `inbox` locked and never after the thread marked the inbox closed.

        private enum Command {
            case add(CurlTransfer, CheckedContinuation<TransportResult, Never>)
            case cancel(CurlTransfer)
        }

        private struct Inbox {
            var commands: [Command] = []
            var stopRequested = false
            /// Set by the thread before it frees the multi handle: nothing may wake it any more.
            var closed = false
        }

        private struct Running {
            let transfer: CurlTransfer
            let continuation: CheckedContinuation<TransportResult, Never>
        }

        /// Kept-alive connections at most, over all backends (least recently used closed first).
        static let maximumIdleConnections = 64

        /// The multi handle (`CURLM *`), owned; freed by the thread when it ends.
        private let multi: UnsafeMutableRawPointer
        private let inbox = Locked(Inbox())

        /// A running loop, or why there is none.
        static func start(name: String) -> Result<CurlMultiLoop, NetworkFailure> {
            guard CurlGlobal.initialized else {
                return .failure(
                    NetworkFailure(.other, detail: "libcurl could not be initialised (\(CurlGlobal.problem))"))
            }
            guard let multi = curl_multi_init() else {
                return .failure(NetworkFailure(.other, detail: "libcurl could not make a multi handle"))
            }
            let limited = fcc_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, maximumIdleConnections)
            guard limited == CURLM_OK else {
                let detail = "libcurl refused CURLMOPT_MAXCONNECTS: \(CurlGlobal.text(of: limited))"
                _ = curl_multi_cleanup(multi)  // its code only reports a bad handle; nothing else to free
                return .failure(NetworkFailure(.other, detail: detail))
            }
            let loop = CurlMultiLoop(adopting: multi)
            let thread = Thread { loop.run() }
            thread.name = name
            thread.start()
            return .success(loop)
        }

        private init(adopting multi: UnsafeMutableRawPointer) {
            self.multi = multi
        }

        // MARK: Any thread

        /// Runs `transfer`; `continuation` gets its result, once.
        func submit(_ transfer: CurlTransfer, continuation: CheckedContinuation<TransportResult, Never>) {
            let accepted = inbox.withLock { inbox -> Bool in
                guard !inbox.stopRequested else { return false }
                inbox.commands.append(.add(transfer, continuation))
                wake()
                return true
            }
            if !accepted {
                continuation.resume(
                    returning: .failure(NetworkFailure(.cancelled, detail: "the transport was shut down")))
            }
        }

        /// Ends `transfer` as cancelled if it is still running (or not started); otherwise nothing.
        func cancel(_ transfer: CurlTransfer) {
            inbox.withLock { inbox in
                guard !inbox.closed else { return }
                inbox.commands.append(.cancel(transfer))
                wake()
            }
        }

        /// Ends the loop: running transfers end as cancelled, connections are closed, the multi
        /// handle is freed. Returns at once; the thread finishes on its own.
        func shutdown() {
            inbox.withLock { inbox in
                guard !inbox.stopRequested else { return }
                inbox.stopRequested = true
                wake()
            }
        }

        /// Called with the inbox locked, so that the thread cannot free the multi handle meanwhile.
        private func wake() {
            // Fails only for a bad handle (this one lives until the inbox is closed) or a full wake-up
            // pipe, which already holds a wake-up; at worst the command waits for the poll's 5 s limit.
            _ = curl_multi_wakeup(multi)
        }

        // MARK: The loop's thread

        private func run() {
            var running: [UnsafeMutableRawPointer: Running] = [:]
            while true {
                let (commands, stopping) = inbox.withLock { inbox in
                    defer { inbox.commands.removeAll(keepingCapacity: true) }
                    return (inbox.commands, inbox.stopRequested)
                }
                for command in commands { execute(command, running: &running) }
                if stopping { break }
                var stillRunning: Int32 = 0
                let performed = curl_multi_perform(multi, &stillRunning)
                if performed != CURLM_OK {
                    failAll(&running, NetworkFailure(.other, detail: "libcurl: \(CurlGlobal.text(of: performed))"))
                }
                collectFinished(&running)
                // Waits for sockets, libcurl's next timeout or a wake-up; at most 5 s for good measure.
                let polled = curl_multi_poll(multi, nil, 0, 5_000, nil)
                if polled != CURLM_OK {
                    failAll(&running, NetworkFailure(.other, detail: "libcurl: \(CurlGlobal.text(of: polled))"))
                }
            }
            failAll(&running, NetworkFailure(.cancelled, detail: "the transport was shut down"))
            let leftovers = inbox.withLock { inbox in
                inbox.closed = true
                defer { inbox.commands.removeAll() }
                return inbox.commands
            }
            for case .add(_, let continuation) in leftovers {
                continuation.resume(
                    returning: .failure(NetworkFailure(.cancelled, detail: "the transport was shut down")))
            }
            // Closes every kept-alive connection. Its code only reports a bad handle; nothing is left to free.
            _ = curl_multi_cleanup(multi)
        }

        private func execute(_ command: Command, running: inout [UnsafeMutableRawPointer: Running]) {
            switch command {
            case .add(let transfer, let continuation):
                let added = curl_multi_add_handle(multi, transfer.easy)
                guard added == CURLM_OK else {
                    let detail = "libcurl could not start the request: \(CurlGlobal.text(of: added))"
                    continuation.resume(returning: .failure(NetworkFailure(.other, detail: detail)))
                    return
                }
                running[transfer.easy] = Running(transfer: transfer, continuation: continuation)
            case .cancel(let transfer):
                finish(
                    transfer.easy, with: .failure(NetworkFailure(.cancelled, detail: "the request was cancelled")),
                    running: &running)
            }
        }

        /// Every transfer libcurl reports done.
        private func collectFinished(_ running: inout [UnsafeMutableRawPointer: Running]) {
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                    let entry = running[easy]
                else { continue }
                let result = entry.transfer.result(for: message.pointee.data.result)
                finish(easy, with: result, running: &running)
            }
        }

        private func failAll(_ running: inout [UnsafeMutableRawPointer: Running], _ failure: NetworkFailure) {
            for easy in Array(running.keys) { finish(easy, with: .failure(failure), running: &running) }
        }

        /// Takes the transfer out of the multi handle and resumes its caller. Nothing when it is not
        /// running (already finished, or a cancel that came after its end).
        private func finish(
            _ easy: UnsafeMutableRawPointer, with result: TransportResult,
            running: inout [UnsafeMutableRawPointer: Running]
        ) {
            guard let entry = running.removeValue(forKey: easy) else { return }
            let removed = curl_multi_remove_handle(multi, easy)
            if removed != CURLM_OK {
                // The multi handle may still use the easy handle: keep it alive (a small leak) rather
                // than free memory libcurl could touch.
                Self.unremovable.withLock { $0.append(entry.transfer) }
            }
            entry.continuation.resume(returning: result)
        }

        /// Transfers libcurl would not take back (never seen; see `finish`).
        private static let unremovable = Locked<[CurlTransfer]>([])
    }
#endif

#if os(Linux)
    import Foundation

    /// The production ``HTTPTransport`` on Linux: the system libcurl (Debian `libcurl4-openssl-dev`).
    ///
    /// One multi handle and the one thread that waits for its sockets (``CurlMultiLoop``) run every
    /// request, so requests to many backends run concurrently and each backend's connection is kept
    /// alive between requests (``shared`` is the one instance of the process: ``DefaultTransport``
    /// returns it). A caller starts its own transfer on the multi handle, under the loop's lock, so
    /// that a request on a kept-alive connection wakes no other thread of the process. The rules
    /// every request gets are in ``CurlRequestOptions``: http and https only, never a redirect, no
    /// proxy, TLS 1.2 or later with peer and host verification always on and the request's
    /// ``TLSTrust``, an exact timeout. Bodies stop at ``HTTPAnswer/maximumBodyBytes`` while they
    /// stream. Plain http is refused here too unless it goes to loopback (``TransportSecurity``),
    /// whoever the caller. Cancelling the calling task removes its transfer at once.
    package final class CurlTransport: HTTPTransport {
        /// The process's transport: its connections are shared by every client and the CLI.
        package static let shared = CurlTransport(threadName: "fetchchannel-curl")

        private let loop: Result<CurlMultiLoop, NetworkFailure>
        /// The easy handles of its finished transfers, for its next ones.
        let handles = CurlEasyHandlePool()

        /// A transport with its own multi handle, thread and connections (tests count connections
        /// with one of their own). Its thread ends when it is released.
        package convenience init() {
            self.init(threadName: "fetchchannel-curl-private")
        }

        /// A transport of its own whose thread sleeps up to `longestSleep` without an event
        /// (``CurlMultiLoop/defaultLongestSleep`` otherwise): a test makes it long, so that a
        /// timeout that ends on time was ended by its timer and not by that safety net.
        package convenience init(longestSleep: Duration) {
            self.init(threadName: "fetchchannel-curl-private", longestSleep: longestSleep)
        }

        private init(threadName: String, longestSleep: Duration = CurlMultiLoop.defaultLongestSleep) {
            loop = CurlMultiLoop.start(name: threadName, longestSleep: longestSleep)
        }

        deinit {
            if case .success(let loop) = loop { loop.shutdown() }
        }

        /// CURLOPT_TIMEOUT_MS (``CurlRequestOptions``) ends the transfer at the timeout.
        package var keepsTimeoutExactly: Bool { true }

        package func send(_ request: TransportRequest) async -> TransportResult {
            if let refusal = TransportSecurity.refusal(for: request.url) {
                return .failure(refusal)
            }
            let loop: CurlMultiLoop
            let transfer: CurlTransfer
            do {
                // The loop first: a transport without one makes no transfer (no CA file read, no handle).
                loop = try self.loop.get()
                transfer = try CurlTransfer.make(for: request, from: handles).get()
            } catch {
                return .failure(error)
            }
            if Task.isCancelled {
                return .failure(NetworkFailure(.cancelled, detail: "cancelled before sending"))
            }
            // A cancellation before the submission marks the transfer, and the submission then does
            // not start it; one after removes it. Both under the loop's lock: there is no window
            // in which a cancelled task's request still goes out.
            return await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    loop.submit(transfer, continuation: continuation)
                }
            } onCancel: {
                loop.cancel(transfer)
            }
        }
    }
#endif

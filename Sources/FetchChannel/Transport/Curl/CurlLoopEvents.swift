#if os(Linux)
    internal import CCurl
    internal import CCurlShim
    import Foundation

    /// The three descriptors the transport's loop sleeps on: an epoll set, which also watches the
    /// other two; a timerfd for libcurl's next timeout; an eventfd that ends the loop. Owned by the
    /// loop's ``CurlMultiState`` and closed once, after the multi handle is freed.
    struct CurlLoopEvents {
        let epoll: Int32
        let timer: Int32
        let wake: Int32

        /// The three, the timer and the wake-up watched for reading; or why not (nothing is left open).
        static func open() -> Result<CurlLoopEvents, NetworkFailure> {
            var opened: [Int32] = []
            func fail(_ what: String, _ code: Int32) -> Result<CurlLoopEvents, NetworkFailure> {
                opened.forEach(fcc_descriptor_close)
                return .failure(NetworkFailure(.other, detail: "the transport could not \(what) (errno \(-code))"))
            }
            let epoll = fcc_epoll_open()
            guard epoll >= 0 else { return fail("make its epoll set", epoll) }
            opened.append(epoll)
            let timer = fcc_timer_open()
            guard timer >= 0 else { return fail("make its timer", timer) }
            opened.append(timer)
            let wake = fcc_wake_open()
            guard wake >= 0 else { return fail("make its wake-up descriptor", wake) }
            opened.append(wake)
            for fd in [timer, wake] {
                let watched = fcc_epoll_watch(epoll, fd, Int32(CURL_POLL_IN), 1)
                guard watched == 0 else { return fail("watch its own descriptors", watched) }
            }
            return .success(CurlLoopEvents(epoll: epoll, timer: timer, wake: wake))
        }

        func close() {
            [wake, timer, epoll].forEach(fcc_descriptor_close)
        }
    }
#endif

#if os(Linux)
    internal import CCurl
    import DeviceSigning

    /// A transport's easy handles of finished transfers, reset and kept for its next requests.
    ///
    /// A new easy handle costs a request its allocation and, on its first transfer, libcurl's
    /// receive and send buffers; freeing it costs as much again. A handle given back here is
    /// reset (`curl_easy_reset`: every option back to its default, so no option of one request,
    /// its URL, method, body, headers, trust or callbacks, reaches the next) and handed to a later
    /// transfer, which sets its options again (``CurlRequestOptions``).
    ///
    /// What a reset keeps, and why it does not matter here:
    /// - the handle's TLS session cache: every request turns it off (CURLOPT_SSL_SESSIONID_CACHE
    ///   0), so a new connection never resumes a session made under another request's anchors or
    ///   pins, as with a new handle;
    /// - the last socket error (CURLINFO_OS_ERRNO), which libcurl 7.88 does not clear when the
    ///   next transfer starts and which the failure mapping reads (a stale ECONNREFUSED would call
    ///   a later failure "connection refused"): a handle that holds one is freed, not kept (its
    ///   transfer says so when it gives the handle back);
    /// - connections and DNS answers are the multi handle's while a transfer runs; cookies and
    ///   alt-svc are never started.
    ///
    /// At most ``capacity`` are kept (more than the transport's usual concurrency, one request per
    /// backend); more are freed. A handle comes back only after it left the multi handle. Kept
    /// handles hold their buffers (some tens of kilobytes each) until the transport is released.
    final class CurlEasyHandlePool: Sendable {
        static let capacity = 16

        /// The idle handles (`CURL *`), owned; freed with the pool.
        private let idle = Locked<[UnsafeMutableRawPointer]>([])

        init() {}

        deinit {
            idle.withLock { handles in
                for handle in handles { curl_easy_cleanup(handle) }
                handles.removeAll()
            }
        }

        /// An idle handle, or a new one; nil when libcurl could not make one.
        func take() -> UnsafeMutableRawPointer? {
            if let handle = idle.withLock({ $0.popLast() }) { return handle }
            return curl_easy_init()
        }

        /// Takes back a handle that no multi handle holds: reset and kept, unless `reusable` is
        /// false (it holds a socket error, read by the transfer) or enough are kept; then freed.
        /// Whatever its options pointed to may be freed once this returns.
        func giveBack(_ handle: UnsafeMutableRawPointer, reusable: Bool = true) {
            guard reusable else {
                curl_easy_cleanup(handle)
                return
            }
            curl_easy_reset(handle)
            let kept = idle.withLock { handles -> Bool in
                guard handles.count < Self.capacity else { return false }
                handles.append(handle)
                return true
            }
            if !kept { curl_easy_cleanup(handle) }
        }

        /// How many handles are kept now.
        var idleCount: Int { idle.withLock { $0.count } }
    }
#endif

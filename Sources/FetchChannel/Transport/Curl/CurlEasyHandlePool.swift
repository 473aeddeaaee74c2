#if os(Linux)
    internal import CCurl
    import DeviceSigning

    /// A transport's easy handles of finished transfers, reset and kept for its next requests.
    ///
    /// A new easy handle costs a request its allocation and, on its first transfer, libcurl's
    /// receive and send buffers; freeing it costs as much again. A handle given back here is
    /// reset (`curl_easy_reset`: every option back to its default, so nothing of one request's
    /// URL, method, headers, trust or callbacks reaches the next) and handed to a later transfer,
    /// which sets its options again (``CurlRequestOptions``).
    ///
    /// `curl_easy_reset` keeps the handle's TLS session cache; every request turns it off
    /// (CURLOPT_SSL_SESSIONID_CACHE 0), so a new connection never resumes a session made under
    /// another request's anchors or pins, as with a new handle. Connections and DNS answers are
    /// the multi handle's, as before; cookies are never started.
    ///
    /// At most ``capacity`` are kept (more than the transport's usual concurrency, one request per
    /// backend); more are freed. A handle comes back only after it left the multi handle.
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

        /// Takes back a handle that no multi handle holds: reset, then kept or freed. Whatever its
        /// options pointed to may be freed once this returns.
        func giveBack(_ handle: UnsafeMutableRawPointer) {
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

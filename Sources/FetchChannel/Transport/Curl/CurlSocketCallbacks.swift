#if os(Linux)
    internal import CCurl

    /// libcurl's two multi callbacks, as C function pointers. Their context is the
    /// ``CurlMultiState``, unretained: libcurl calls them only inside `curl_multi_*` calls that the
    /// state makes while the loop's lock is held, and the loop keeps the state alive until it freed
    /// the multi handle.
    enum CurlSocketCallbacks {
        static let socket: curl_socket_callback = { easy, socket, what, context, _ in
            guard let context else { return -1 }
            return Unmanaged<CurlMultiState>.fromOpaque(context).takeUnretainedValue()
                .watch(socket, what: what, for: easy)
        }

        static let timer: curl_multi_timer_callback = { _, timeoutMilliseconds, context in
            guard let context else { return -1 }
            return Unmanaged<CurlMultiState>.fromOpaque(context).takeUnretainedValue()
                .schedule(timeoutMilliseconds: timeoutMilliseconds)
        }
    }
#endif

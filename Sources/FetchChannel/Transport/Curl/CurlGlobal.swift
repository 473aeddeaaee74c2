#if os(Linux)
    internal import CCurl

    /// libcurl's process-wide set-up, done once before the first handle is made.
    ///
    /// `curl_global_init` is not thread-safe on every build, so it runs inside a `static let`
    /// initialiser, which Swift runs exactly once whatever the threads. It is never undone
    /// (`curl_global_cleanup` while another library in the process, such as FoundationNetworking,
    /// still uses libcurl would pull OpenSSL's state from under it).
    enum CurlGlobal {
        private static let outcome: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

        /// True when the set-up succeeded.
        static var initialized: Bool { outcome == CURLE_OK }

        /// Why the set-up failed, for an error message.
        static var problem: String { text(of: outcome) }

        /// libcurl's text for `code`.
        static func text(of code: CURLcode) -> String {
            String(cString: curl_easy_strerror(code))
        }

        /// libcurl's text for a multi-interface code.
        static func text(of code: CURLMcode) -> String {
            String(cString: curl_multi_strerror(code))
        }
    }
#endif

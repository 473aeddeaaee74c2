#if os(Linux)
    internal import CCurl
    import Glibc

    /// libcurl's process-wide set-up, done once before the first handle is made.
    ///
    /// `curl_global_init` is not thread-safe on every build, so it runs inside a `static let`
    /// initialiser, which Swift runs exactly once whatever the threads. It is never undone
    /// (`curl_global_cleanup` while another library in the process, such as FoundationNetworking,
    /// still uses libcurl would pull OpenSSL's state from under it).
    ///
    /// Not at all while `SSLKEYLOGFILE` is set: libcurl's OpenSSL back end then opens that file
    /// during this set-up (a blocking open, created 0644) and appends the TLS secrets of every
    /// connection to it, so whoever reads it can decrypt the Device-Signatures and the operations.
    /// libcurl offers no option against it, and unsetting the variable would race with every
    /// other thread of the app that reads the environment; every request fails instead, saying so.
    /// Package-wide: every libcurl handle of the package, the benchmark's own C client too, is
    /// made only after it.
    package enum CurlGlobal {
        /// The variable libcurl reads for its key log.
        static let keyLogVariable = "SSLKEYLOGFILE"

        /// nil when the set-up succeeded; else why not.
        private static let refusal: String? = {
            if let path = getenv(keyLogVariable), path.pointee != 0 {
                return "\(keyLogVariable) is set, and libcurl would write the TLS secrets of every "
                    + "connection to that file; unset it"
            }
            let code = curl_global_init(Int(CURL_GLOBAL_DEFAULT))
            return code == CURLE_OK ? nil : text(of: code)
        }()

        /// True when the set-up succeeded.
        package static var initialized: Bool { refusal == nil }

        /// Why the set-up failed, for an error message.
        package static var problem: String { refusal ?? "" }

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

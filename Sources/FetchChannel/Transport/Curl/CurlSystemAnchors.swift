#if os(Linux)
    internal import CCurl
    internal import CCurlShim
    import Foundation
    import Glibc

    /// How a request that trusts the system CAs (``TLSTrust/system``) names them to libcurl.
    ///
    /// Debian's libcurl names both its CA bundle file and its CA directory. With a directory named,
    /// libcurl keeps no CA store between connections, and OpenSSL parses the whole bundle (some
    /// 150 certificates, 20 to 30 ms) for every new connection, inside the transport's lock, so
    /// every other transfer waits meanwhile. With the bundle alone, libcurl parses it once and
    /// keeps the store in the multi handle for ``cacheSeconds`` (CURLOPT_CA_CACHE_TIMEOUT). The
    /// bundle is what `update-ca-certificates` writes from the same CAs as the directory; a
    /// certificate put into the directory by hand, without it, is not trusted then.
    ///
    /// When libcurl names no bundle, or the file it names is not a regular file, the request keeps
    /// libcurl's defaults (docs/ARCHITECTURE.md, "Transport and trust").
    enum CurlSystemAnchors {
        /// How long a parsed system CA store serves new connections: a CA removed from the system
        /// bundle stops being trusted by new connections within this time.
        static let cacheSeconds = 600

        /// libcurl's built-in CA bundle (CURLINFO_CAINFO) when it is a regular file, else nil. Read once.
        static let bundle: String? = {
            guard CurlGlobal.initialized, let easy = curl_easy_init() else { return nil }
            defer { curl_easy_cleanup(easy) }
            var text: UnsafePointer<CChar>?
            guard fcc_easy_getinfo_string(easy, CURLINFO_CAINFO, &text) == CURLE_OK, let text else { return nil }
            return usableBundle(String(cString: text))
        }()

        /// `path` when it names a regular file (symbolic links followed), else nil.
        static func usableBundle(_ path: String) -> String? {
            var status = stat()
            guard !path.isEmpty, stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
            return path
        }

        /// The options for a request trusting the system CAs: the bundle alone, its store kept.
        static func apply(to transfer: CurlTransfer) throws(NetworkFailure) {
            guard bundle != nil else { return }
            try transfer.set(CURLOPT_CAPATH, nil)
            try transfer.set(CURLOPT_CA_CACHE_TIMEOUT, cacheSeconds)
        }
    }
#endif

#if os(Linux)
    internal import CCurl
    import Foundation

    /// The options every request gets: the transport's rules as libcurl options, in one place.
    ///
    /// - Only `http` and `https`, for the request and for any redirect (CURLOPT_PROTOCOLS_STR,
    ///   CURLOPT_REDIR_PROTOCOLS_STR); and no redirect is ever followed (CURLOPT_FOLLOWLOCATION 0):
    ///   a 3xx is returned as the answer, so a signature or token never travels to another URL.
    /// - No proxy, whatever `http_proxy`/`https_proxy`/`ALL_PROXY` say (CURLOPT_PROXY ""): a proxy
    ///   for plain http to loopback would see the Device-Signature, and an https proxy is a party the
    ///   backend's trust does not cover.
    /// - No cookies (no cookie engine is started), no `.netrc`, no content decoding; no user name
    ///   or password from the URL (CURLOPT_DISALLOW_USERNAME_IN_URL; ``TransportSecurity`` refuses
    ///   such a URL first). A transfer coding other than `chunked` and an answer head over
    ///   ``HTTPAnswer/maximumHeadBytes`` are refused as not HTTP (``CurlTransfer``).
    /// - TLS 1.2 or later; peer and host verification always on (CURLOPT_SSL_VERIFYPEER 1,
    ///   CURLOPT_SSL_VERIFYHOST 2); the anchors and pins of the request's ``TLSTrust``. No TLS
    ///   session is resumed from an easy handle's cache (CURLOPT_SSL_SESSIONID_CACHE 0): handles are
    ///   reused (``CurlEasyHandlePool``), and a session made under one request's trust is not another's.
    /// - HTTP/1.1 only: the version every endpoint here is tested with.
    /// - CURLOPT_TIMEOUT_MS: the whole exchange, exact to the millisecond (below 1 s too), counted
    ///   from the caller's request: the loop sets what is left of it as it starts the transfer.
    /// - CURLOPT_NOSIGNAL: libcurl runs on the transport's thread and its callers' and must not use signals.
    /// - Sockets opened close-on-exec (CURLOPT_OPENSOCKETFUNCTION): a process the app starts never
    ///   inherits a connection to a backend.
    /// - CURLOPT_QUICK_EXIT: a transfer that ends (timeout, cancellation) while its host name is
    ///   still being looked up does not wait for the resolver thread. Waiting would hold the
    ///   transport's lock, and so every other request, for as long as DNS takes; libcurl detaches
    ///   the thread instead, which frees its own memory when the lookup returns.
    enum CurlRequestOptions {
        static func apply(_ request: TransportRequest, to transfer: CurlTransfer) throws(NetworkFailure) {
            try transfer.set(CURLOPT_URL, request.url.absoluteString)
            try transfer.set(CURLOPT_PROTOCOLS_STR, "http,https")
            try transfer.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
            try transfer.set(CURLOPT_FOLLOWLOCATION, 0)
            try transfer.set(CURLOPT_PROXY, "")
            try transfer.set(CURLOPT_DISALLOW_USERNAME_IN_URL, 1)
            try transfer.set(CURLOPT_NOSIGNAL, 1)
            try transfer.set(CURLOPT_QUICK_EXIT, 1)
            try transfer.set(CURLOPT_TIMEOUT_MS, timeoutMilliseconds(request.timeout))
            try transfer.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
            try transfer.set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
            try transfer.set(CURLOPT_SSL_VERIFYPEER, 1)
            try transfer.set(CURLOPT_SSL_VERIFYHOST, 2)
            try transfer.set(CURLOPT_SSL_SESSIONID_CACHE, 0)
            // Plain http (to loopback only) has no certificate to check: a CA file is not read for it.
            if request.url.scheme?.lowercased() == "https" { try applyTrust(request.trust, to: transfer) }
            try transfer.setCallbacks()
            try applyMethod(request.method, body: request.body, to: transfer)
            // A POST always sends a body (an empty one when it has none): libcurl would give it a
            // form Content-Type unless the line that removes it is there.
            let sendsBody = request.body != nil || request.method == "POST"
            try transfer.setHeaderLines(CurlHeaderLines.lines(for: request.headers, hasBody: sendsBody))
        }

        /// Rounded up to whole milliseconds, at least 1 (libcurl reads 0 as "no timeout") and at
        /// most a day (``HTTPTransport/longestTimeout``).
        static func timeoutMilliseconds(_ timeout: Duration) -> Int {
            let (seconds, attoseconds) = timeout.components
            guard seconds >= 0, timeout > .zero else { return 1 }
            let longest = CurlTransport.longestTimeout.components.seconds
            guard seconds < longest else { return Int(longest) * 1_000 }
            let millis = seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            return Int(max(1, millis))
        }

        /// A private bundle or file replaces the system CAs: CURLOPT_CAPATH (Debian's libcurl
        /// defaults it to /etc/ssl/certs) is cleared so that only the backend's CAs are trusted.
        private static func applyTrust(_ trust: TLSTrust, to transfer: CurlTransfer) throws(NetworkFailure) {
            switch trust.anchors {
            case .system:
                try CurlSystemAnchors.apply(to: transfer)
            case .pemBundle(let pem):
                try transfer.set(CURLOPT_CAPATH, nil)
                try transfer.setCABundle(pem)
            case .pemFile(let path):
                // Read here, not by libcurl: see CertificateAuthorityFile (no hang on a FIFO; read
                // again for every request).
                try transfer.set(CURLOPT_CAPATH, nil)
                try transfer.setCABundle(try CertificateAuthorityFile.read(path, trust: trust).get())
            }
            if !trust.pins.isEmpty {
                try transfer.set(CURLOPT_PINNEDPUBLICKEY, pinnedPublicKeyOption(trust.pins))
            }
        }

        /// The pins as CURLOPT_PINNEDPUBLICKEY's `sha256//A;sha256//B` list, plus one entry that can
        /// never match a key and records which characters of the pins are upper case.
        ///
        /// libcurl reuses a kept-alive connection only for a request whose pin text equals the
        /// connection's, but it compares that text ignoring case (checked with libcurl 7.88), while
        /// base64 is case-sensitive: a request pinned to another key whose pin differs only in case
        /// would ride on a connection whose key was never checked against it. The extra entry makes
        /// pin lists that differ in case differ in lower-case text; `-` is not base64, so no key's
        /// digest ever matches it.
        static func pinnedPublicKeyOption(_ pins: [String]) -> String {
            let joined = pins.joined(separator: ";")
            var mask = ""
            var nibble = 0
            for (index, scalar) in joined.unicodeScalars.enumerated() {
                nibble = nibble << 1 | (scalar.properties.isUppercase ? 1 : 0)
                if index % 4 == 3 {
                    mask.append(String(nibble, radix: 16))
                    nibble = 0
                }
            }
            mask.append(String(nibble, radix: 16))
            return joined + ";" + TLSTrust.pinPrefix + "case-" + mask
        }

        /// GET, HEAD and POST as libcurl knows them; any other token as a custom method. A body is
        /// copied by libcurl (CURLOPT_COPYPOSTFIELDS), so the request's `Data` need not outlive this.
        private static func applyMethod(_ method: String, body: Data?, to transfer: CurlTransfer) throws(NetworkFailure)
        {
            guard CurlHeaderLines.isToken(method), method.utf8.count <= 32 else {
                throw NetworkFailure(.other, detail: "the method \(method.debugDescription) is not an HTTP token")
            }
            switch (method, body) {
            case ("GET", nil):
                try transfer.set(CURLOPT_HTTPGET, 1)
            case ("HEAD", nil):
                try transfer.set(CURLOPT_NOBODY, 1)
            case ("POST", _):
                try transfer.setBody(body ?? Data())
            case (_, let body?):
                try transfer.setBody(body)
                try transfer.set(CURLOPT_CUSTOMREQUEST, method)
            case (_, nil):
                try transfer.set(CURLOPT_CUSTOMREQUEST, method)
            }
        }
    }
#endif

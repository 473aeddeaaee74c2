#if os(Linux)
    internal import CCurl
    internal import CCurlShim
    import Foundation

    /// One request on libcurl: its easy handle, the memory libcurl reads while the request runs (the
    /// header list and the error buffer), and the answer as it arrives.
    ///
    /// Made and configured on the calling thread (``make(for:from:)``), then handed to the
    /// ``CurlMultiLoop``; from then on it is touched only under the loop's lock: libcurl calls the
    /// callbacks below from `curl_multi_socket_action`, on whichever thread holds the lock, and the
    /// loop reads the result there. The callbacks find the transfer through an unretained pointer:
    /// the loop holds the transfer strongly for as long as its easy handle is in the multi handle,
    /// which is the only time libcurl calls them.
    final class CurlTransfer: @unchecked Sendable {
        // @unchecked: mutable state is used by one thread at a time, handed over through a lock (above).

        /// The easy handle (`CURL *`), owned: given back to `pool` once, in deinit, after the loop
        /// removed it.
        let easy: UnsafeMutableRawPointer
        private let pool: CurlEasyHandlePool
        /// The request's header fields as libcurl reads them during the transfer; owned.
        private var headerList: UnsafeMutablePointer<curl_slist>?
        /// CURLOPT_ERRORBUFFER: libcurl writes its message here; owned, CURL_ERROR_SIZE bytes.
        private let errorBuffer: UnsafeMutablePointer<CChar>
        /// What the failure mapping needs to say what to check.
        let host: String
        let trust: TLSTrust
        let timeout: Duration
        /// When the caller asked for the request: its timeout counts from here, not from when the
        /// loop starts the transfer (``CurlMultiState/add(_:continuation:)``).
        let requestedAt: ContinuousClock.Instant

        private var response = CurlResponseHead()
        private var body = Data()
        private var bodyWasCutOff = false
        /// Bytes of the answer's heads so far, interim ones included.
        private var headBytes = 0
        /// Why the answer's head was refused, which stopped the transfer; nil when it was not.
        private var headRefusal: String?
        /// How often libcurl was about to send the request (CURLOPT_PREREQFUNCTION).
        private var sendAttempts = 0
        /// Set, under the loop's lock, by a cancellation: also one that came before the transfer
        /// was submitted, which then never starts it (``CurlMultiLoop/submit(_:continuation:)``).
        var cancelRequested = false
        private let isHead: Bool

        /// Adopts `easy` (given back in deinit, whatever happens next).
        private init(
            adopting easy: UnsafeMutableRawPointer, from pool: CurlEasyHandlePool, request: TransportRequest,
            host: String, requestedAt: ContinuousClock.Instant
        ) {
            self.easy = easy
            self.pool = pool
            self.host = host
            trust = request.trust
            timeout = request.timeout
            self.requestedAt = requestedAt
            isHead = request.method == "HEAD"
            errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
            errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        }

        deinit {
            // First: once reset, libcurl no longer points to the list and buffer. A handle that
            // holds a socket error is not reused (CurlEasyHandlePool).
            pool.giveBack(easy, reusable: !holdsSocketError)
            curl_slist_free_all(headerList)
            errorBuffer.deallocate()
        }

        /// A transfer for `request` on a handle of `pool`, every option set; or why not (nothing was
        /// sent). `requestedAt` is when the caller asked (a test sets it in the past).
        static func make(
            for request: TransportRequest, from pool: CurlEasyHandlePool,
            requestedAt: ContinuousClock.Instant = .now
        ) -> Result<CurlTransfer, NetworkFailure> {
            guard let host = request.url.host else {
                return .failure(NetworkFailure(.invalidURL, detail: "\(request.url.absoluteString) has no host"))
            }
            guard CurlGlobal.initialized else {
                return .failure(
                    NetworkFailure(.other, detail: "libcurl could not be initialised (\(CurlGlobal.problem))"))
            }
            guard let easy = pool.take() else {
                return .failure(
                    NetworkFailure(.other, detail: "libcurl could not make a handle for the request (out of memory)"))
            }
            let transfer = CurlTransfer(
                adopting: easy, from: pool, request: request, host: host, requestedAt: requestedAt)
            do {
                try CurlRequestOptions.apply(request, to: transfer)
            } catch {
                return .failure(error)
            }
            return .success(transfer)
        }

        // MARK: Options (CurlRequestOptions sets them; every return value is checked)

        func set(_ option: CURLoption, _ value: Int) throws(NetworkFailure) {
            try Self.check(fcc_easy_setopt_long(easy, option, value), option)
        }

        func set(_ option: CURLoption, size: Int) throws(NetworkFailure) {
            try Self.check(fcc_easy_setopt_off_t(easy, option, curl_off_t(size)), option)
        }

        /// A string option: libcurl copies it (CURLOPT_COPYPOSTFIELDS is set through `setBody`).
        func set(_ option: CURLoption, _ text: String?) throws(NetworkFailure) {
            guard let text else {
                try Self.check(fcc_easy_setopt_pointer(easy, option, nil), option)
                return
            }
            guard !text.utf8.contains(0) else {
                throw NetworkFailure(.other, detail: "a request option contains a NUL byte")
            }
            try Self.check(text.withCString { fcc_easy_setopt_pointer(easy, option, $0) }, option)
        }

        /// CURLOPT_POSTFIELDSIZE_LARGE, then CURLOPT_COPYPOSTFIELDS: libcurl copies the bytes.
        func setBody(_ bytes: Data) throws(NetworkFailure) {
            try set(CURLOPT_POSTFIELDSIZE_LARGE, size: bytes.count)
            let code = bytes.withUnsafeBytes { raw in
                // An empty body still needs a valid pointer (libcurl reads 0 bytes from it).
                withUnsafePointer(to: 0 as UInt8) { empty in
                    fcc_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, raw.baseAddress ?? UnsafeRawPointer(empty))
                }
            }
            try Self.check(code, CURLOPT_COPYPOSTFIELDS)
        }

        /// CURLOPT_CAINFO_BLOB with CURL_BLOB_COPY: libcurl copies the PEM bytes during the call.
        func setCABundle(_ pem: Data) throws(NetworkFailure) {
            let code = pem.withUnsafeBytes { raw -> CURLcode in
                var blob = curl_blob(
                    data: UnsafeMutableRawPointer(mutating: raw.baseAddress), len: raw.count,
                    flags: UInt32(CURL_BLOB_COPY))
                return fcc_easy_setopt_pointer(easy, CURLOPT_CAINFO_BLOB, &blob)
            }
            try Self.check(code, CURLOPT_CAINFO_BLOB)
        }

        /// CURLOPT_HTTPHEADER: the list stays owned here and alive until deinit.
        func setHeaderLines(_ lines: [String]) throws(NetworkFailure) {
            for line in lines {
                guard let extended = line.withCString({ curl_slist_append(headerList, $0) }) else {
                    throw NetworkFailure(.other, detail: "out of memory for the request's header fields")
                }
                headerList = extended
            }
            try Self.check(fcc_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, headerList), CURLOPT_HTTPHEADER)
        }

        /// The error buffer, the callbacks and their context: this transfer, unretained (see the type's comment).
        /// Its sockets are opened close-on-exec.
        func setCallbacks() throws(NetworkFailure) {
            let context = Unmanaged.passUnretained(self).toOpaque()
            try Self.check(fcc_easy_open_sockets_cloexec(easy), CURLOPT_OPENSOCKETFUNCTION)
            try Self.check(fcc_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer), CURLOPT_ERRORBUFFER)
            try Self.check(
                fcc_easy_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION, Self.bodyCallback),
                CURLOPT_WRITEFUNCTION)
            try Self.check(fcc_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context), CURLOPT_WRITEDATA)
            try Self.check(
                fcc_easy_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION, Self.headerCallback),
                CURLOPT_HEADERFUNCTION)
            try Self.check(fcc_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context), CURLOPT_HEADERDATA)
            try Self.check(fcc_easy_setopt_prereq_callback(easy, Self.prereqCallback), CURLOPT_PREREQFUNCTION)
            try Self.check(fcc_easy_setopt_pointer(easy, CURLOPT_PREREQDATA, context), CURLOPT_PREREQDATA)
        }

        private static func check(_ code: CURLcode, _ option: CURLoption) throws(NetworkFailure) {
            guard code != CURLE_OK else { return }
            throw NetworkFailure(
                .other, detail: "libcurl refused option \(option.rawValue): \(CurlGlobal.text(of: code))")
        }

        // MARK: Callbacks (under the loop's lock, inside curl_multi_socket_action)

        private static let bodyCallback: curl_write_callback = { bytes, size, count, context in
            guard let context else { return 0 }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            return transfer.receiveBody(UnsafeRawBufferPointer(start: bytes, count: size * count))
        }

        private static let headerCallback: curl_write_callback = { bytes, size, count, context in
            guard let context else { return 0 }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            return transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: bytes, count: size * count))
        }

        private static let prereqCallback: curl_prereq_callback = { context, _, _, _, _ in
            guard let context else { return Int32(CURL_PREREQFUNC_ABORT) }
            let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
            return transfer.aboutToSend() ? Int32(CURL_PREREQFUNC_OK) : Int32(CURL_PREREQFUNC_ABORT)
        }

        /// Keeps at most ``HTTPAnswer/maximumBodyBytes``; past that, returning less than was given
        /// makes libcurl stop the transfer (CURLE_WRITE_ERROR), and the answer is reported cut off.
        private func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
            // As typed bytes: Data copies a buffer pointer at once, a raw buffer byte by byte.
            let typed = bytes.assumingMemoryBound(to: UInt8.self)
            let room = HTTPAnswer.maximumBodyBytes - body.count
            guard typed.count > room else {
                body.append(typed)
                return typed.count
            }
            body.append(UnsafeBufferPointer(rebasing: typed.prefix(room)))
            bodyWasCutOff = true
            return 0
        }

        /// One header line (libcurl passes whole lines). Returning 0 stops the transfer:
        /// - header fields longer than ``HTTPAnswer/maximumHeadBytes`` in all (interim heads and
        ///   trailers included) are refused;
        /// - at the end of the final head of an answer with a body, a transfer coding other than
        ///   `chunked` is refused: libcurl would decompress a gzip or deflate one on the server's
        ///   word alone, and no answer here is ever asked for compressed;
        /// - at the end of the final head, a Content-Length above the cap stops the transfer before
        ///   any of the body is read; not for an answer that has no body whatever its
        ///   Content-Length (to HEAD, 204, 304: RFC 9110 §8.6).
        private func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) -> Int {
            headBytes += bytes.count  // trailers (after a chunked body) count too
            guard headBytes <= HTTPAnswer.maximumHeadBytes else {
                headRefusal = "the answer's header fields are longer than \(HTTPAnswer.maximumHeadBytes) bytes"
                return 0
            }
            let headHadEnded = response.isComplete
            response.receive(line: bytes)
            // No request here asks to switch protocols. libcurl then takes a 101 as the final head
            // and passes what follows as the body, while CurlResponseHead (rightly, for HTTP) waits
            // for the head after an interim one: the checks below would never run.
            if response.status == 101 {
                headRefusal = "the answer switches protocols (HTTP 101), which this request did not ask for"
                return 0
            }
            guard response.isComplete, !headHadEnded else { return bytes.count }  // decided once, at its end
            let hasNoBody = isHead || response.status == 204 || response.status == 304
            guard !hasNoBody else { return bytes.count }
            if let coding = response.headers["transfer-encoding"], coding.lowercased() != "chunked" {
                headRefusal = "the answer is sent in a transfer coding other than chunked alone"
                return 0
            }
            if let length = response.contentLength, length > HTTPAnswer.maximumBodyBytes {
                bodyWasCutOff = true
                return 0
            }
            return bytes.count
        }

        /// libcurl sends a request again on a new connection when a reused one closed without an
        /// answer. That copy would carry the same Device-Signature (a replay to the backend) or the
        /// same redeem token: the second attempt is aborted, and the caller decides about a new request.
        private func aboutToSend() -> Bool {
            sendAttempts += 1
            return sendAttempts == 1
        }

        // MARK: Result (under the loop's lock, after the transfer ended)

        /// What the transfer came to, given libcurl's code for it.
        func result(for code: CURLcode) -> TransportResult {
            if let headRefusal { return .notHTTP(headRefusal) }
            if let status = response.status, bodyWasCutOff || code == CURLE_OK {
                return .answer(
                    HTTPAnswer(
                        status: status, lowercasedHeaders: response.headers, body: body,
                        bodyWasCutOff: bodyWasCutOff))
            }
            if code == CURLE_OK {
                return .notHTTP("the answer has no HTTP status line")
            }
            // libcurl refuses one header line over 100 KiB itself, before the line reaches
            // receiveHeaderLine, and reports it as out of memory: it is a head over the limit.
            if code == CURLE_OUT_OF_MEMORY, !response.isComplete {
                let message = String(cString: errorBuffer)
                return .notHTTP(
                    "the answer's header fields are longer than \(HTTPAnswer.maximumHeadBytes) bytes"
                        + (message.isEmpty ? "" : " (libcurl: \(message))"))
            }
            if sendAttempts > 1 {
                return .failure(
                    NetworkFailure(
                        .connectionLost,
                        detail: "the kept-alive connection closed without an "
                            + "answer; the request was not sent again"))
            }
            let message = String(cString: errorBuffer)
            let facts = CurlFailureFacts(
                code: Int(code.rawValue), message: message.isEmpty ? CurlGlobal.text(of: code) : message,
                verifyResult: info(CURLINFO_SSL_VERIFYRESULT), osErrno: info(CURLINFO_OS_ERRNO),
                host: host, trust: trust, timeout: timeout)
            return CurlFailureMapping.result(for: facts)
        }

        /// Whether libcurl keeps a socket error for the handle (or cannot say): it would report it
        /// for the handle's next transfer too.
        private var holdsSocketError: Bool {
            var value = 0
            return fcc_easy_getinfo_long(easy, CURLINFO_OS_ERRNO, &value) != CURLE_OK || value != 0
        }

        private func info(_ item: CURLINFO) -> Int {
            var value = 0
            return fcc_easy_getinfo_long(easy, item, &value) == CURLE_OK ? value : 0
        }
    }
#endif

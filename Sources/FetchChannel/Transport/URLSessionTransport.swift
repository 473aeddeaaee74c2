import DeviceSigning
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The ``HTTPTransport`` where libcurl is not built (Apple platforms): one URLSession, ephemeral,
/// without cookies or caches. Trust: the system CAs only (a ``TLSTrust`` of its own is refused).
///
/// Bodies are streamed through a data delegate and kept only up to
/// ``HTTPAnswer/maximumBodyBytes``: past that (or when `Content-Length` announces more) the task
/// is cancelled and the answer reported with ``HTTPAnswer/bodyWasCutOff`` — nothing larger is ever
/// buffered. (`URLSession.bytes(for:)` does not exist in FoundationNetworking.) Redirects are not
/// followed: the 3xx answer is returned as it is, so a signature never travels to another URL.
/// Cancelling the calling task cancels the URLSession task.
final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let delegate: Delegate

    init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCredentialStorage = nil
        configuration.connectionProxyDictionary = [:]  // no proxy, as the libcurl transport (CurlRequestOptions)
        #if canImport(Darwin)
            // TLS 1.2 at least, as the libcurl transport; outside App Transport Security (a
            // command-line tool) the platform's default would apply. (Not built on Linux.)
            configuration.tlsMinimumSupportedProtocolVersion = .TLSv12
        #endif
        delegate = Delegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    func send(_ request: TransportRequest) async -> TransportResult {
        if let refusal = TransportSecurity.refusal(for: request.url) {
            return .failure(refusal)
        }
        // URLSession offers no way to set anchors or pins on Linux, and this transport does not
        // implement the server-trust challenge: a backend with its own trust is not contacted.
        if request.trust != .system, request.url.scheme?.lowercased() == "https" {
            return .failure(
                NetworkFailure(
                    .tlsUntrustedCertificate,
                    detail: "this platform's transport (URLSession) "
                        + "cannot check \(request.trust); only the system CAs"))
        }
        // The header rules of the libcurl transport: a token name, no control character but tab in a value.
        do {
            _ = try CurlHeaderLines.lines(for: request.headers, hasBody: request.body != nil)
        } catch {
            return .failure(error)
        }
        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: Self.timeoutInterval(request.timeout))
        urlRequest.httpMethod = request.method
        urlRequest.httpShouldHandleCookies = false
        for (name, value) in request.headers {
            urlRequest.setValue(String(CurlHeaderLines.withoutSurroundingBlanks(value)), forHTTPHeaderField: name)
        }
        urlRequest.httpBody = request.body
        let task = session.dataTask(with: urlRequest)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                delegate.start(task, continuation: continuation)
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// FoundationNetworking counts whole seconds (0.5 s times out at once): round up, never below
    /// one second, and add a second so that the client's own, exact timeout fires first.
    static func timeoutInterval(_ timeout: Duration) -> TimeInterval {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        return max(1, seconds.rounded(.up)) + 1
    }

    /// Collects each task's answer; the session calls it on its own serial queue.
    private final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        // @unchecked: the only stored property is a `Locked`, itself Sendable; NSObject is not.
        private struct Exchange {
            var continuation: CheckedContinuation<TransportResult, Never>
            var body = Data()
        }

        private let exchanges = Locked<[Int: Exchange]>([:])

        /// Called in the requesting task. A cancellation handler that ran before the exchange was
        /// registered cancelled the task with nobody to tell: that case is answered here.
        func start(_ task: URLSessionDataTask, continuation: CheckedContinuation<TransportResult, Never>) {
            exchanges.withLock { $0[task.taskIdentifier] = Exchange(continuation: continuation) }
            if Task.isCancelled {
                if let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) {
                    exchange.continuation.resume(
                        returning: .failure(NetworkFailure(.cancelled, detail: "cancelled before sending")))
                }
                task.cancel()
                return
            }
            task.resume()
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            completionHandler(nil)  // deliver the 3xx itself
        }

        func urlSession(
            _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            if response.expectedContentLength > Int64(HTTPAnswer.maximumBodyBytes) {
                finishCutOff(dataTask, response: response, body: Data())
                completionHandler(.cancel)
                return
            }
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            let overflow = exchanges.withLock { exchanges -> Data? in
                // Taken out and put back, so appending does not copy the body held by the dictionary.
                guard var exchange = exchanges.removeValue(forKey: dataTask.taskIdentifier) else { return nil }
                defer { exchanges[dataTask.taskIdentifier] = exchange }
                let room = HTTPAnswer.maximumBodyBytes - exchange.body.count
                guard data.count > room else {
                    exchange.body.append(data)
                    return nil
                }
                exchange.body.append(data.prefix(room))
                return exchange.body
            }
            if let body = overflow, let response = dataTask.response {
                finishCutOff(dataTask, response: response, body: body)
                dataTask.cancel()
            }
        }

        /// Answers at once with what was read: the rest of the body is never waited for.
        private func finishCutOff(_ task: URLSessionTask, response: URLResponse, body: Data) {
            guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            guard let response = response as? HTTPURLResponse else {
                exchange.continuation.resume(returning: .notHTTP("the answer has no HTTP status"))
                return
            }
            exchange.continuation.resume(returning: .answer(Self.answer(response, body: body, cutOff: true)))
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            // Nothing left when the answer was already given (cut off).
            guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            let result: TransportResult
            if let error {
                result = .from(urlSessionError: error)
            } else if let response = task.response as? HTTPURLResponse {
                result = .answer(Self.answer(response, body: exchange.body, cutOff: false))
            } else {
                result = .notHTTP("the answer has no HTTP status")
            }
            exchange.continuation.resume(returning: result)
        }

        private static func answer(_ response: HTTPURLResponse, body: Data, cutOff: Bool) -> HTTPAnswer {
            var headers: [String: String] = [:]
            for (name, value) in response.allHeaderFields {
                if let name = name as? String, let value = value as? String { headers[name] = value }
            }
            return HTTPAnswer(status: response.statusCode, headers: headers, body: body, bodyWasCutOff: cutOff)
        }
    }
}

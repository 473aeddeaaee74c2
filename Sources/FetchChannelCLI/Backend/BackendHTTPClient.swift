import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The few backend calls the CLI makes itself (registering a dispatch target, rotating its key):
/// JSON over URLSession, ephemeral, no cookies or caches, bounded answers.
struct BackendHTTPClient: Sendable {
    /// The backend's device endpoints live under this prefix (ARCHITECTURE, "Endpoints").
    static let basePath = "/nevisfido"
    static let maximumAnswerBytes = 1 << 20

    struct Answer: Sendable {
        let status: Int
        let body: Data

        /// The body as a JSON object, if it is one.
        var object: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        }

        /// `401 INVALID_SIGNATURE: message` from an error body, or the status and a short excerpt.
        var summary: String {
            if let object, let code = object["errorCode"] as? String {
                let message = (object["message"] as? String).map { ": " + Self.clean($0) } ?? ""
                return "\(status) \(Self.clean(code))\(message)"
            }
            let excerpt = Self.clean(String(decoding: body.prefix(200), as: UTF8.self))
            return excerpt.isEmpty ? "\(status)" : "\(status): \(excerpt)"
        }

        /// One printable line of at most 300 characters.
        static func clean(_ text: String) -> String {
            let scalars = text.unicodeScalars.prefix(300).map { scalar -> Character in
                scalar.properties.generalCategory == .control ? " " : Character(scalar)
            }
            return String(scalars)
        }
    }

    let timeoutSeconds: Double

    init(timeoutSeconds: Double = 15) {
        self.timeoutSeconds = timeoutSeconds
    }

    /// Sends `body` as JSON; returns the answer, whatever its status. Throws `CLIFailure` when
    /// there is no answer (refused, DNS, TLS, timeout) or the answer is too large.
    func send(_ method: String, _ url: URL, json body: [String: Any], headers: [String: String] = [:]) async throws -> Answer {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalAndRemoteCacheData, timeoutInterval: timeoutSeconds)
        request.httpMethod = method
        request.httpBody = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }

        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = timeoutSeconds
        configuration.timeoutIntervalForResource = timeoutSeconds
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw CLIFailure("no answer from \(Self.origin(of: url)): \(Self.describe(error))")
        }
        guard let http = response as? HTTPURLResponse else {
            throw CLIFailure("\(Self.origin(of: url)) did not answer with HTTP")
        }
        guard data.count <= Self.maximumAnswerBytes else {
            throw CLIFailure("\(Self.origin(of: url)) answered with more than \(Self.maximumAnswerBytes) bytes")
        }
        return Answer(status: http.statusCode, body: data)
    }

    static func origin(of url: URL) -> String {
        var components = URLComponents()
        components.scheme = url.scheme
        components.host = url.host
        components.port = url.port
        return components.string ?? url.absoluteString
    }

    static func describe(_ error: any Error) -> String {
        let error = error as NSError
        switch (error.domain, error.code) {
        case (NSURLErrorDomain, NSURLErrorCannotConnectToHost): return "connection refused (is the backend running?)"
        case (NSURLErrorDomain, NSURLErrorTimedOut): return "timed out"
        case (NSURLErrorDomain, NSURLErrorCannotFindHost): return "unknown host"
        case (NSURLErrorDomain, NSURLErrorNetworkConnectionLost): return "the connection was closed without an answer"
        default: return error.localizedDescription
        }
    }
}

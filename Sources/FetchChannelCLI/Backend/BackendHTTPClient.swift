import DeviceSigning
import FetchChannel
import FetchChannelWire
import Foundation

/// The few backend calls the CLI makes itself (registering a dispatch target, rotating its key,
/// reading a backend's clock): JSON through the library's one transport (`DefaultTransport`), so
/// they follow its rules — never a redirect (a 3xx is an answer like any other, and a signature
/// never travels to a URL the user did not name), bodies capped at 1 MiB while they stream,
/// plain http only to loopback, an exact timeout.
struct BackendHTTPClient: Sendable {
    struct Answer: Sendable {
        let status: Int
        let body: Data
        /// Header fields as the transport gives them (lowercased names).
        let headers: [String: String]
        /// What the request carried that its answer must never be quoted with (its
        /// Device-Signature): a backend or proxy that echoes the request would put it in an error.
        let secrets: [String]

        init(status: Int, body: Data, headers: [String: String] = [:], redacting secrets: [String] = []) {
            self.status = status
            self.body = body
            self.headers = headers
            self.secrets = secrets
        }

        /// The body as a JSON object, if it is one; with a member name twice (at any depth) it is
        /// not (the package's strict reader): which one counts would be a parser's choice.
        var object: [String: Any]? {
            guard (try? StrictJSON.requireUniqueMemberNames(body)) != nil else { return nil }
            return (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        }

        /// The value of the header field `name` (any case), or nil.
        func header(_ name: String) -> String? {
            headers[name.lowercased()]
        }

        /// `401 INVALID_SIGNATURE: message` from an error body, or the status and a short excerpt;
        /// a redirect says where it pointed, and that it was not followed. What it quotes has the
        /// request's ``secrets`` redacted before it is cut, as the library's errors do. A success
        /// (2xx) is never quoted, only its Content-Type: operations in it hold redeem tokens.
        var summary: String {
            func quoted(_ text: String) -> String { Self.clean(HTTPErrorInfo.redacted(text, secrets)) }
            if (200..<300).contains(status) {
                return "\(status) (\(header(WireHeader.contentType).map(quoted) ?? "no Content-Type"))"
            }
            if let object, let code = object[WireErrorCode.Member.errorCode] as? String {
                let message = (object[WireErrorCode.Member.message] as? String).map { ": " + quoted($0) } ?? ""
                return "\(status) \(quoted(code))\(message)"
            }
            if (300..<400).contains(status) {
                let target = header(WireHeader.location).map { " to \(quoted($0))" } ?? ""
                return "\(status) redirect\(target), not followed"
            }
            let redacted = HTTPErrorInfo(status: status, body: body, redacting: secrets).bodyExcerpt
            let excerpt = Self.clean(String(String.UnicodeScalarView(redacted.unicodeScalars.prefix(200))))
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

    let timeout: Duration
    private let transport: any HTTPTransport

    init(timeout: Duration = .seconds(15), transport: any HTTPTransport = DefaultTransport.make()) {
        self.timeout = timeout
        self.transport = transport
    }

    /// Sends `body` as JSON; returns the answer, whatever its status (a 3xx included).
    /// Throws `CLIFailure` when there is no usable answer (refused, DNS, TLS, timeout, not HTTP,
    /// larger than 1 MiB).
    func send(
        _ method: String, _ url: URL, json body: [String: Any], headers: [String: String] = [:],
        trust: TLSTrust = .system
    ) async throws -> Answer {
        let data = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
        var fields = headers
        fields[WireHeader.contentType] = WireMediaType.json
        fields[WireHeader.accept] = WireMediaType.json
        return try await send(method, url, body: data, headers: fields, trust: trust)
    }

    /// A request without a body (the clock reading of `skew`, the key probe of `rotate`).
    func get(_ url: URL, headers: [String: String] = [:], trust: TLSTrust = .system) async throws -> Answer {
        try await send("GET", url, body: nil, headers: headers, trust: trust)
    }

    private func send(
        _ method: String, _ url: URL, body: Data?, headers: [String: String],
        trust: TLSTrust
    ) async throws -> Answer {
        let request = TransportRequest(
            method: method, url: url, headers: headers, body: body, timeout: timeout, trust: trust)
        let origin = Self.origin(of: url)
        switch await transport.send(request, timer: ContinuousRequestTimer()) {
        case .failure(let failure):
            throw CLIFailure(.backend, "no answer from \(origin): \(Self.describe(failure))")
        case .notHTTP(let detail):
            throw CLIFailure(.backend, "\(origin) did not answer with HTTP (\(Answer.clean(detail)))")
        case .answer(let answer):
            guard !answer.bodyWasCutOff else {
                throw CLIFailure(.backend, "\(origin) answered with more than \(HTTPAnswer.maximumBodyBytes) bytes")
            }
            let signatures = headers.filter { $0.key.lowercased() == WireHeader.deviceSignature.lowercased() }
            return Answer(
                status: answer.status, body: answer.body, headers: answer.headers, redacting: Array(signatures.values))
        }
    }

    static func origin(of url: URL) -> String {
        var components = URLComponents()
        components.scheme = url.scheme
        components.host = url.host
        components.port = url.port
        return components.string ?? url.absoluteString
    }

    /// What went wrong, in words a person can act on.
    static func describe(_ failure: NetworkFailure) -> String {
        switch failure.kind {
        case .connectionRefused: return "connection refused (is the backend running?)"
        case .timedOut: return "timed out"
        case .hostNotFound: return "unknown host"
        case .connectionLost: return "the connection was closed without an answer"
        default: return failure.description
        }
    }
}

/// Why a request got no HTTP answer: the cause carried by `networkError`.
///
/// `kind` is for programs (retry later, tell the person to check the connection, fix the
/// configuration); `detail` is the underlying system's text, for logs.
public struct NetworkFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Nothing listens at the server's address and port (`ECONNREFUSED`).
        case connectionRefused
        /// The host name does not resolve.
        case hostNotFound
        /// No complete answer within the request timeout.
        case timedOut
        /// The TLS handshake failed (untrusted or expired certificate, protocol mismatch).
        case tls
        /// The request was cancelled (the fetch's task was cancelled).
        case cancelled
        /// The connection broke while the request or answer was under way.
        case connectionLost
        /// Refused before any request: plain `http://` to a host that is not loopback. The
        /// request would carry a Device-Signature that anyone on the path could read and replay.
        case insecureTransport
        /// Refused before any request: the URL has no host or a scheme other than http/https.
        case invalidURL
        /// Refused before any request: the redeem URL is not on a registered backend (an operation
        /// from a push, link or QR code must redeem at a backend this device registered with).
        case foreignRedeemUrl
        /// Anything else (no route, no network, a system error).
        case other

        public var description: String { rawValue }
    }

    public let kind: Kind
    /// The underlying text (e.g. the URLError description); never the request's signature.
    public let detail: String

    public init(_ kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { detail.isEmpty ? kind.rawValue : "\(kind.rawValue): \(detail)" }
}

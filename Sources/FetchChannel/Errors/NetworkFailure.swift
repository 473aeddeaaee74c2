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
        /// The server's certificate chain does not lead to a CA the request trusts (the system CAs,
        /// or the backend's private CA bundle), or that bundle could not be read.
        case tlsUntrustedCertificate
        /// The server's certificate is not valid for the host name of the URL.
        case tlsHostnameMismatch
        /// The server's certificate has expired or is not valid yet (or the device clock is wrong).
        case tlsCertificateExpired
        /// The chain is trusted, but the server's public key matches none of the backend's pins.
        case tlsPinMismatch
        /// Any other TLS failure: no common protocol version or cipher, a reset during the
        /// handshake, a server that does not speak TLS on that port.
        case tlsHandshake
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
    /// The underlying text (e.g. libcurl's error message); for TLS failures also what to check.
    /// Never the request's signature.
    public let detail: String

    public init(_ kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { detail.isEmpty ? kind.rawValue : "\(kind.rawValue): \(detail)" }
}

import DeviceSigning

/// Why a request got no HTTP answer: the cause carried by `networkError`.
///
/// `code` is for programs (retry later, tell the person to check the connection, fix the
/// configuration); `detail` is the underlying system's text, for logs. Equal when the codes are.
public struct NetworkFailure: CodedError {
    public struct Code: ErrorCode, CaseIterable {
        public let rawValue: String

        /// Nothing listens at the server's address and port (`ECONNREFUSED`).
        public static let connectionRefused = Code(rawValue: "connectionRefused")
        /// The host name does not resolve.
        public static let hostNotFound = Code(rawValue: "hostNotFound")
        /// No complete answer within the request timeout.
        public static let timedOut = Code(rawValue: "timedOut")
        /// The server's certificate chain does not lead to a CA the request trusts (the system CAs,
        /// or the backend's private CA bundle), or that bundle could not be read.
        public static let tlsUntrustedCertificate = Code(rawValue: "tlsUntrustedCertificate")
        /// The server's certificate is not valid for the host name of the URL.
        public static let tlsHostnameMismatch = Code(rawValue: "tlsHostnameMismatch")
        /// The server's certificate has expired or is not valid yet (or the device clock is wrong).
        public static let tlsCertificateExpired = Code(rawValue: "tlsCertificateExpired")
        /// The chain is trusted, but the server's public key matches none of the backend's pins.
        public static let tlsPinMismatch = Code(rawValue: "tlsPinMismatch")
        /// Any other TLS failure: no common protocol version or cipher, a reset during the
        /// handshake, a server that does not speak TLS on that port.
        public static let tlsHandshake = Code(rawValue: "tlsHandshake")
        /// The request was cancelled (the fetch's task was cancelled).
        public static let cancelled = Code(rawValue: "cancelled")
        /// The connection broke while the request or answer was under way.
        public static let connectionLost = Code(rawValue: "connectionLost")
        /// Refused before any request: plain `http://` to a host that is not loopback. The
        /// request would carry a Device-Signature that anyone on the path could read and replay.
        public static let insecureTransport = Code(rawValue: "insecureTransport")
        /// Refused before any request: the URL has no host or a scheme other than http/https.
        public static let invalidURL = Code(rawValue: "invalidURL")
        /// Refused before any request: the redeem URL is not on a registered backend (an operation
        /// from a push, link or QR code must redeem at a backend this device registered with).
        public static let foreignRedeemUrl = Code(rawValue: "foreignRedeemUrl")
        /// Anything else (no route, no network, a system error).
        public static let other = Code(rawValue: "other")

        /// The codes this version produces.
        public static let allCases: [Code] = [
            .connectionRefused,
            .hostNotFound,
            .timedOut,
            .tlsUntrustedCertificate,
            .tlsHostnameMismatch,
            .tlsCertificateExpired,
            .tlsPinMismatch,
            .tlsHandshake,
            .cancelled,
            .connectionLost,
            .insecureTransport,
            .invalidURL,
            .foreignRedeemUrl,
            .other,
        ]
    }

    /// The name the fetch error's JSON (`networkKind`) and older callers use for ``code``.
    public typealias Kind = Code

    public let code: Code
    /// The underlying text (e.g. libcurl's error message); for TLS failures also what to check.
    /// Never the request's signature.
    public let detail: String

    /// ``code``, under the name the fetch error's JSON uses.
    public var kind: Code { code }
    /// ``detail``: the text for a person and for logs.
    public var reason: String { detail }

    public init(_ code: Code, detail: String) {
        self.code = code
        self.detail = detail
    }
}

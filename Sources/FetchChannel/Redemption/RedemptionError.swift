/// Why redeeming an operation's token failed.
///
/// `url` is the redeem URL that was (or would have been) posted to. Excerpts never contain the token.
public enum RedemptionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The token was redeemed before (`TOKEN_ALREADY_REDEEMED`, 410): the operation is done; treat
    /// it as redeemed, never retry it.
    case tokenAlreadyRedeemed(url: String, httpError: HTTPErrorInfo)
    /// The operation's lifetime is over (`TOKEN_EXPIRED`, 410): it must be started again.
    case tokenExpired(url: String, httpError: HTTPErrorInfo)
    /// No HTTP answer (refused, DNS, TLS, timeout, cancelled, lost), or refused before sending
    /// (plain http:// to a host that is not loopback, an unusable URL, a redeem URL outside the
    /// registered backends: `foreignRedeemUrl`). The token may be retried.
    case networkError(url: String, cause: NetworkFailure)
    /// Anything else: another status or error code, or a 2xx whose body is not a JSON object.
    case unknown(url: String, httpError: HTTPErrorInfo?, reason: String)

    /// The case name: `tokenAlreadyRedeemed`, `tokenExpired`, `networkError` or `unknown`.
    public var code: String {
        switch self {
        case .tokenAlreadyRedeemed: "tokenAlreadyRedeemed"
        case .tokenExpired: "tokenExpired"
        case .networkError: "networkError"
        case .unknown: "unknown"
        }
    }

    public var url: String {
        switch self {
        case .tokenAlreadyRedeemed(let url, _), .tokenExpired(let url, _), .networkError(let url, _),
            .unknown(let url, _, _):
            url
        }
    }

    public var httpError: HTTPErrorInfo? {
        switch self {
        case .tokenAlreadyRedeemed(_, let info), .tokenExpired(_, let info): info
        case .unknown(_, let info, _): info
        case .networkError: nil
        }
    }

    /// What happened and what to do, for a person.
    public var message: String {
        switch self {
        case .tokenAlreadyRedeemed:
            return "This operation was already started (its token was redeemed before). Nothing more to do for it."
        case .tokenExpired:
            return "This operation has expired. Start it again where it began (the website or app that asked for it)."
        case .networkError(let url, let cause):
            switch cause.code {
            case .insecureTransport:
                return
                    "\(url) was not contacted: plain http:// is allowed only for loopback addresses. The operation's redeem URL must use https://."
            case .invalidURL:
                return "The operation's redeem URL \(url) is not usable (\(cause.detail))."
            case .foreignRedeemUrl:
                return "\(url) was not contacted: it is not on a backend this device is registered with "
                    + "(\(cause.detail)). Start the operation from a backend you registered with."
            case .cancelled:
                return "Redeeming the operation at \(url) was cancelled before it finished."
            default:
                return
                    "The operation could not be redeemed at \(url): \(cause). Check the network connection and try again."
            }
        case .unknown(let url, let info, let reason):
            let status = info.map { " (HTTP \($0.status))" } ?? ""
            return
                "The operation could not be redeemed at \(url)\(status): \(reason) Try again later; if it persists, tell the backend's operators."
        }
    }

    public var description: String { "\(code): \(message)" }
}

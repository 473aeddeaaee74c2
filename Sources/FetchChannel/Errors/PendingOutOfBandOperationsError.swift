import DeviceSigning

/// Why one backend's pending operations could not be fetched.
///
/// A fetch returns one of these per failing backend next to the operations of the others (see
/// ``PendingOutOfBandOperationsResult``). Every case that concerns a backend names it (`server`,
/// its base URL) and, where there was an HTTP answer, carries ``HTTPErrorInfo`` (status and a
/// bounded body excerpt, never the request's signature). ``code`` is stable for logs and JSON;
/// ``message`` says what happened and what to do.
///
/// How answers map to cases: ``FetchErrorMapping``.
public enum PendingOutOfBandOperationsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The backend rejected (`CLOCK_SKEW_TOO_BIG`, definite) or very probably rejected (a 401/403
    /// while the estimated offset exceeds the tolerance, probable) the request's creation time:
    /// the device clock is off. `measuredOffsetMillis` is server − device time (positive: the
    /// device clock is behind), nil when nothing measured it; `toleranceMillis` is what the backend
    /// accepts. With ``ClockSkewPolicy/compensate(maximumOffsetMillis:)`` this is returned only when
    /// the single compensated retry was not possible or failed too.
    case clockSkewTooBig(server: String, measuredOffsetMillis: Int64?, toleranceMillis: Int64, httpError: HTTPErrorInfo)

    /// No HTTP answer: connection refused, host not found, TLS failure, timeout, cancellation, a
    /// lost connection; or the request was refused before it was sent (plain http:// to a host
    /// that is not loopback, an unusable URL). `cause.code` tells which.
    case networkError(server: String, cause: NetworkFailure)

    /// The backend does not provide the endpoint: HTTP 404, 405 or 501 (wrong server URL or path
    /// template, or a backend without the fetch channel).
    case operationNotSupportedByBackend(server: String, httpError: HTTPErrorInfo)

    /// The backend rejected the signature, the key or the dispatch target (HTTP 401 or 403 that is
    /// not clock skew): the device's registration there is no longer valid; register again.
    case unauthorized(server: String, httpError: HTTPErrorInfo)

    /// A success status whose answer cannot be used: not JSON, the wrong content type, wrong field
    /// types or missing fields, truncated, larger than 1 MiB (cut off unread), or bytes that are
    /// not an HTTP answer at all; an encrypted answer that does not decrypt. Also operations whose
    /// redeem URL is not on the backend that returned them: those are dropped (the reason names
    /// both origins and how many), and the backend's other operations are still returned.
    /// `cause.code` tells which; `cause.reason` names what was wrong.
    case invalidResponse(server: String, cause: InvalidResponse)

    /// The backend failed: any 5xx except 501.
    case serverError(server: String, httpError: HTTPErrorInfo)

    /// The device key for this backend cannot be loaded or used safely: missing, corrupt, unsafe
    /// file permissions, wrong or missing passphrase, or the request could not be signed with it.
    /// `server` is the registration the key belongs to; nothing was sent. nil when the
    /// registrations could not be read at all (``RegisteredFetchClient``), or the fetch was
    /// cancelled while they were.
    case deviceProtectionError(server: String?, reason: String)

    /// Anything else: a status with no defined meaning here (1xx, 3xx — redirects are not
    /// followed —, 400, 409, 410, 429, other 4xx, or outside 100–599).
    case unknown(server: String?, httpError: HTTPErrorInfo?)

    /// The case name: `clockSkewTooBig`, `networkError`, `operationNotSupportedByBackend`,
    /// `unauthorized`, `invalidResponse`, `serverError`, `deviceProtectionError` or `unknown`.
    public var code: String {
        switch self {
        case .clockSkewTooBig: "clockSkewTooBig"
        case .networkError: "networkError"
        case .operationNotSupportedByBackend: "operationNotSupportedByBackend"
        case .unauthorized: "unauthorized"
        case .invalidResponse: "invalidResponse"
        case .serverError: "serverError"
        case .deviceProtectionError: "deviceProtectionError"
        case .unknown: "unknown"
        }
    }

    /// The backend's base URL, when the error concerns one.
    public var server: String? {
        switch self {
        case .clockSkewTooBig(let server, _, _, _), .networkError(let server, _),
            .operationNotSupportedByBackend(let server, _), .unauthorized(let server, _),
            .invalidResponse(let server, _), .serverError(let server, _):
            server
        case .deviceProtectionError(let server, _), .unknown(let server, _):
            server
        }
    }

    /// The HTTP answer, when there was one.
    public var httpError: HTTPErrorInfo? {
        switch self {
        case .clockSkewTooBig(_, _, _, let info), .operationNotSupportedByBackend(_, let info),
            .unauthorized(_, let info), .serverError(_, let info):
            info
        case .unknown(_, let info):
            info
        case .networkError, .invalidResponse, .deviceProtectionError:
            nil
        }
    }

    /// The clock skew, for `clockSkewTooBig`.
    public var clockSkew: ClockSkew? {
        guard case .clockSkewTooBig(let server, let measured, let tolerance, _) = self else { return nil }
        return ClockSkew(server: server, measuredOffsetMillis: measured, toleranceMillis: tolerance)
    }

    /// Server − device time in milliseconds, for `clockSkewTooBig` when it was measured.
    public var measuredOffsetMillis: Int64? { clockSkew?.measuredOffsetMillis }

    /// The backend's clock tolerance, for `clockSkewTooBig`.
    public var toleranceMillis: Int64? { clockSkew?.toleranceMillis }

    /// The network failure, for `networkError`.
    public var networkFailure: NetworkFailure? {
        guard case .networkError(_, let cause) = self else { return nil }
        return cause
    }

    /// Why the answer could not be used, for `invalidResponse`.
    public var invalidResponse: InvalidResponse? {
        guard case .invalidResponse(_, let cause) = self else { return nil }
        return cause
    }

    /// What happened and what to do, for a person.
    public var message: String {
        switch self {
        case .clockSkewTooBig:
            return clockSkew?.message ?? ""
        case .networkError(let server, let cause):
            return Self.networkMessage(server: server, cause: cause)
        case .operationNotSupportedByBackend(let server, let info):
            return "\(server) does not offer the pending-operations endpoint (HTTP \(info.status)). "
                + "Check the server URL and the path template, or whether this backend supports the fetch channel."
        case .unauthorized(let server, let info):
            return "\(server) rejected the device's signature (HTTP \(info.status)): the device's registration "
                + "there (dispatch target or signature key) is no longer valid. Register the device again."
        case .invalidResponse(let server, let cause):
            return "\(server) sent an answer that cannot be used: \(cause.reason) "
                + "Try again later; if it persists, the backend or a proxy in front of it is misconfigured."
        case .serverError(let server, let info):
            return
                "\(server) failed (HTTP \(info.status)). Try again later; if it persists, tell the backend's operators."
        case .deviceProtectionError(let server, let reason):
            // Tied to no registration: the registrations themselves could not be had, and the
            // reason says why; no key is at fault.
            guard let server else { return "\(reason) The next fetch asks for them again." }
            return "The device key for \(server) cannot be used: \(reason) Until it is fixed (or the device "
                + "is registered again with a new key), nothing is fetched from this backend."
        case .unknown(let server, let info):
            let who = server ?? "The backend"
            guard let info else { return "\(who) could not be asked for pending operations for an unexpected reason." }
            if info.status == 429 {
                // Too many requests: nothing to check but how often this device asks.
                return "\(who) refuses requests this often (HTTP 429). Fetch less often: on the "
                    + "fetch triggers only, not on a timer; try again in a while."
            }
            return "\(who) gave an unexpected answer (HTTP \(info.status)). Try again later; "
                + "if it persists, check the server URL and tell the backend's operators."
        }
    }

    public var description: String { "\(code): \(message)" }

    private static func networkMessage(server: String, cause: NetworkFailure) -> String {
        let detail = cause.detail.isEmpty ? "" : " (\(cause.detail))"
        let sentences = cause.detail.isEmpty ? "" : " " + cause.detail + (cause.detail.hasSuffix(".") ? "" : ".")
        switch cause.code {
        case .connectionRefused:
            return "Could not connect to \(server): nothing is listening there (connection refused). "
                + "Check the server URL, or try again when the backend is up."
        case .hostNotFound:
            return "The host of \(server) was not found. Check the server URL and the network connection."
        case .timedOut:
            return "\(server) did not answer in time. Check the network connection and try again."
        // The transport's TLS details are sentences that say what to check (which CA file, pin or name).
        case .tlsUntrustedCertificate:
            return "\(server) was not trusted: its certificate is not issued by a trusted CA.\(sentences)"
        case .tlsHostnameMismatch:
            return "\(server) was not trusted: its certificate is for another host name.\(sentences)"
        case .tlsCertificateExpired:
            return "\(server) was not trusted: its certificate is outside its validity period.\(sentences)"
        case .tlsPinMismatch:
            return "\(server) was not trusted: its public key matches none of the pinned keys.\(sentences)"
        case .tlsHandshake:
            return "No secure connection to \(server) could be made.\(sentences)"
        case .cancelled:
            return "The request to \(server) was cancelled before it finished."
        case .connectionLost:
            return "The connection to \(server) was lost\(detail). Try again."
        case .insecureTransport:
            return "\(server) was not contacted: plain http:// is allowed only for loopback addresses "
                + "(127.0.0.0/8, ::1, localhost), because the request's signature must not travel in clear. Use https://."
        case .invalidURL:
            return "\(server) is not a usable server URL\(detail). Use an https:// URL with a host name."
        case .foreignRedeemUrl:
            return "\(server) was not contacted: it is not a backend this device is registered with\(detail)."
        default:  // .other, and any code a newer transport adds
            return "Could not reach \(server)\(detail). Check the network connection and try again."
        }
    }
}

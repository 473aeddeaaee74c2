/// Why a `Device-Signature` was refused.
///
/// A value with a `reason` for people; the wire module gives each case its stable `code` and the
/// HTTP status a backend answers with (docs/ARCHITECTURE.md, "Wire contract"). Equality compares
/// the associated values too; compare `code` to match the kind only.
public enum DeviceSignatureRejection: Error, Sendable, Hashable {
    /// The header value is not a well-formed Device-Signature: too large, not a strict compact
    /// JWS, `alg` other than ES256 (`none` and `HS256` included), `typ` other than "JWT", no
    /// `kid`, or a payload that is not the expected JSON object (missing or mistyped members,
    /// `dispatchTargetId` different from `kid`, request id not 1...64 characters, creation time
    /// not an integer). A request the client has to fix. `MALFORMED_REQUEST`, 400.
    case malformed(reason: String)
    /// No key is registered for the `kid`. `UNKNOWN_DISPATCH_TARGET`, 401.
    case unknownDispatchTarget(String)
    /// The signature does not verify with the key registered for the `kid`.
    /// `INVALID_SIGNATURE`, 401.
    case invalidSignature
    /// `|serverTime - creationTime|` exceeds the tolerance. `CLOCK_SKEW_TOO_BIG`, 401; the
    /// emulator adds `serverTimeInEpochMillis` to the body.
    case clockSkewTooBig(serverTimeMillis: Int64, creationTimeMillis: Int64)
    /// The request id was already accepted for this dispatch target inside the replay window.
    /// `REPLAYED_REQUEST`, 401.
    case replayedRequest(String)
    /// The replay cache is full of entries that are still live. Evicting one would let its
    /// request be replayed, so new requests are refused until entries expire.
    /// `REPLAY_CACHE_FULL`, 503: the client may retry later with a new request.
    case replayCacheFull(capacity: Int)
    /// The dispatch target already has `quota` request ids live in the replay cache (its share,
    /// so that one device cannot fill the cache for every other). Its oldest one expires in
    /// `retryAfterSeconds` (≥ 1). `REPLAY_QUOTA_EXCEEDED`, 429 with `Retry-After`: the client may
    /// retry after that many seconds with a new request.
    case replayQuotaExceeded(quota: Int, retryAfterSeconds: Int64)

    /// The `Retry-After` delay in seconds (RFC 9110 §10.2.3) the answer carries, or nil for none.
    public var retryAfterSeconds: Int64? {
        if case .replayQuotaExceeded(_, let seconds) = self { return seconds }
        return nil
    }

    /// What happened and what to do about it.
    public var reason: String {
        switch self {
        case .malformed(let reason):
            return reason
        case .unknownDispatchTarget(let id):
            return "No signature key is registered for dispatch target \"\(id.prefix(64))\"; register the device again."
        case .invalidSignature:
            return
                "The Device-Signature does not verify with the key registered for its dispatch target; the device key may have changed: register it again."
        case .clockSkewTooBig(let server, let creation):
            let (difference, overflow) = creation.subtractingReportingOverflow(server)
            let amount = overflow ? "more than \(Int64.max) ms" : "\(difference.magnitude) ms"
            let direction = creation > server ? "ahead of" : "behind"
            return
                "The request was created \(amount) \(direction) the server time (\(server)); set the device clock to automatic time."
        case .replayedRequest(let requestId):
            return
                "The request id \"\(requestId)\" was already used; every request, retries included, needs a new request id and signature."
        case .replayCacheFull(let capacity):
            return
                "The server's replay cache holds \(capacity) live request ids and accepts no more until some expire; retry later with a new request."
        case .replayQuotaExceeded(let quota, let seconds):
            return "This dispatch target sent \(quota) requests within the replay window, its quota; "
                + "retry after \(seconds) s with a new request."
        }
    }
}

/// The backend's error vocabulary: the `errorCode` of its JSON error answers
/// `{"errorCode": CODE, "message": text}` (docs/ARCHITECTURE.md, "Wire contract").
///
/// A closed vocabulary, so that the reference backend answers only codes the contract names and a
/// switch over them is exhaustive; a code a backend sends that is not here stays a string to the
/// client. The Device-Signature codes are also the verifier's rejection codes
/// (``DeviceSignatureRejection/wireCode``); the others are the backend's own answers.
public enum WireErrorCode: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The members of an error body.
    public enum Member {
        public static let errorCode = "errorCode"
        public static let message = "message"
        /// The server's clock, added to `CLOCK_SKEW_TOO_BIG`.
        public static let serverTimeInEpochMillis = "serverTimeInEpochMillis"
    }

    // MARK: Device-Signature

    case malformedRequest = "MALFORMED_REQUEST"
    case unknownDispatchTarget = "UNKNOWN_DISPATCH_TARGET"
    case invalidSignature = "INVALID_SIGNATURE"
    case clockSkewTooBig = "CLOCK_SKEW_TOO_BIG"
    case replayedRequest = "REPLAYED_REQUEST"
    case replayCacheFull = "REPLAY_CACHE_FULL"
    case replayQuotaExceeded = "REPLAY_QUOTA_EXCEEDED"

    // MARK: Who may sign (counted by the reference backend; answered as INVALID_SIGNATURE)

    case signatureRequired = "SIGNATURE_REQUIRED"
    case foreignDispatchTarget = "FOREIGN_DISPATCH_TARGET"

    // MARK: Redemption

    case tokenAlreadyRedeemed = "TOKEN_ALREADY_REDEEMED"
    case tokenExpired = "TOKEN_EXPIRED"
    case unknownToken = "UNKNOWN_TOKEN"

    // MARK: The reference backend's guards, limits and faults

    case misdirectedRequest = "MISDIRECTED_REQUEST"
    case forbidden = "FORBIDDEN"
    case unsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
    case notAcceptable = "NOT_ACCEPTABLE"
    case encryptionFailed = "ENCRYPTION_FAILED"
    /// The reference backend could not write an answer, or an operation, as JSON (never expected:
    /// said rather than answered as `{}`).
    case serializationFailed = "SERIALIZATION_FAILED"
    case tooManyTargets = "TOO_MANY_TARGETS"
    case tooManyOperations = "TOO_MANY_OPERATIONS"
    case tooManyFaults = "TOO_MANY_FAULTS"
    case injectedFault = "INJECTED_FAULT"
    /// 503: a dispatch before the reference backend knows the URL its operations redeem at.
    case notStarted = "NOT_STARTED"

    // MARK: The reference backend's HTTP server (a request it does not take as HTTP; 400 is MALFORMED_REQUEST)

    /// 408: the request did not arrive within the server's request timeout.
    case httpRequestTimeout = "HTTP_REQUEST_TIMEOUT"
    /// 411: a chunked body without Content-Length.
    case httpLengthRequired = "HTTP_LENGTH_REQUIRED"
    /// 413: a body over the server's limit, refused before it is read.
    case httpContentTooLarge = "HTTP_CONTENT_TOO_LARGE"
    /// 414: a request target over the request line's limit.
    case httpURITooLong = "HTTP_URI_TOO_LONG"
    /// 431: a header section over the server's limits.
    case httpHeaderFieldsTooLarge = "HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE"
    /// 503: the server serves its most connections, none of them idle.
    case httpServiceUnavailable = "HTTP_SERVICE_UNAVAILABLE"
    /// 505: an HTTP major version other than 1.
    case httpVersionNotSupported = "HTTP_VERSION_NOT_SUPPORTED"
    /// 500: the server's handler made an answer HTTP cannot carry (never expected).
    case httpInternalServerError = "HTTP_INTERNAL_SERVER_ERROR"

    /// The code as the wire writes it.
    public var description: String { rawValue }
}

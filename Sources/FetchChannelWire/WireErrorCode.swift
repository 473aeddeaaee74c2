/// The backend's error vocabulary: the `errorCode` of its JSON error answers
/// `{"errorCode": CODE, "message": text}` (docs/ARCHITECTURE.md, "Wire contract").
///
/// The Device-Signature codes are also the verifier's rejection codes
/// (``DeviceSignatureRejection/code``); the others are the backend's own answers.
public enum WireErrorCode {
    /// The members of an error body.
    public enum Member {
        public static let errorCode = "errorCode"
        public static let message = "message"
        /// The server's clock, added to `CLOCK_SKEW_TOO_BIG`.
        public static let serverTimeInEpochMillis = "serverTimeInEpochMillis"
    }

    // MARK: Device-Signature

    public static let malformedRequest = "MALFORMED_REQUEST"
    public static let unknownDispatchTarget = "UNKNOWN_DISPATCH_TARGET"
    public static let invalidSignature = "INVALID_SIGNATURE"
    public static let clockSkewTooBig = "CLOCK_SKEW_TOO_BIG"
    public static let replayedRequest = "REPLAYED_REQUEST"
    public static let replayCacheFull = "REPLAY_CACHE_FULL"
    public static let replayQuotaExceeded = "REPLAY_QUOTA_EXCEEDED"

    // MARK: Who may sign (counted by the reference backend; answered as INVALID_SIGNATURE)

    public static let signatureRequired = "SIGNATURE_REQUIRED"
    public static let foreignDispatchTarget = "FOREIGN_DISPATCH_TARGET"

    // MARK: Redemption

    public static let tokenAlreadyRedeemed = "TOKEN_ALREADY_REDEEMED"
    public static let tokenExpired = "TOKEN_EXPIRED"
    public static let unknownToken = "UNKNOWN_TOKEN"

    // MARK: The reference backend's guards, limits and faults

    public static let misdirectedRequest = "MISDIRECTED_REQUEST"
    public static let forbidden = "FORBIDDEN"
    public static let unsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
    public static let notAcceptable = "NOT_ACCEPTABLE"
    public static let encryptionFailed = "ENCRYPTION_FAILED"
    public static let tooManyTargets = "TOO_MANY_TARGETS"
    public static let tooManyOperations = "TOO_MANY_OPERATIONS"
    public static let injectedFault = "INJECTED_FAULT"
}

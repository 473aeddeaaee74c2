/// The names of the header fields the client and the reference backend exchange, as the wire
/// contract writes them (docs/ARCHITECTURE.md, "Wire contract"). Field names are
/// case-insensitive: compare them with a case-insensitive lookup.
public enum WireHeader {
    /// The compact ES256 JWS that authenticates a device request.
    public static let deviceSignature = "Device-Signature"
    /// RFC 9110 HTTP-date of the answer: the clock-skew estimate's input.
    public static let date = "Date"
    /// Present on an answer from a cache: its `Date` is then not the server's current time.
    public static let age = "Age"
    /// Seconds to wait before a new request (429 `REPLAY_QUOTA_EXCEEDED`).
    public static let retryAfter = "Retry-After"
    public static let contentType = "Content-Type"
    public static let accept = "Accept"
    /// The methods a 405 answer allows.
    public static let allow = "Allow"
    /// Where a redirect points (never followed).
    public static let location = "Location"
    public static let host = "Host"
    public static let contentLength = "Content-Length"
    public static let transferEncoding = "Transfer-Encoding"
    public static let connection = "Connection"
    /// libcurl adds `Expect: 100-continue` unless told not to.
    public static let expect = "Expect"
}

/// Why a redemption got no usable answer. The pipeline releases the token, so the person (or the
/// next fetch) can try again: nothing says the backend processed it.
public struct RedemptionFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// No answer: refused, timed out, cancelled, the connection lost.
        case networkError
        /// The backend failed (5xx).
        case serverError
        /// Any other answer that is neither a success nor a definite "already redeemed" or
        /// "expired" (e.g. 400, an unreadable body).
        case unknown

        public var description: String { rawValue }
    }

    public let kind: Kind
    /// What happened and what to do, for a person and the logs; never a secret.
    public let message: String

    public init(_ kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// `networkError`, `serverError` or `unknown`: stable, for logs and JSON.
    public var code: String { kind.rawValue }

    public var description: String { "\(code): \(message)" }
}

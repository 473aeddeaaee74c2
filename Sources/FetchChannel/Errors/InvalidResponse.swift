/// Why a success answer could not be used: the cause carried by `invalidResponse`.
///
/// `kind` is for programs (an undecryptable answer points at the registration's encryption key, a
/// foreign redeem URL at the backend's data, the others at the backend or a proxy); `reason` is
/// the text for a person and for logs. Never the request's signature.
public struct InvalidResponse: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Not JSON, the wrong content type or none, wrong field types or missing fields,
        /// truncated, or no body (204): not the `{"operations":[…]}` answer.
        case malformed
        /// Larger than 1 MiB: the transport cut it off, and nothing of it was read.
        case tooLarge
        /// The bytes are not an HTTP answer at all (another protocol on the port).
        case notHTTP
        /// Some operations' redeem URL is not on the backend that returned them: those were
        /// dropped and will not be redeemed; the backend's other operations are still returned.
        case foreignRedeemUrl
        /// The answer does not decrypt with the registration's encryption key, or is not the
        /// media type asked for: JSON when `application/jose` was asked, or a JWE when JSON was
        /// (docs/ARCHITECTURE.md, "Encrypted answers"). Nothing of it is used.
        case undecryptable

        public var description: String { rawValue }
    }

    public let kind: Kind
    /// What was wrong, as a sentence.
    public let reason: String

    public init(_ kind: Kind, reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String { "\(kind.rawValue): \(reason)" }
}

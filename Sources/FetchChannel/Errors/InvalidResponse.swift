import DeviceSigning

/// Why a success answer could not be used: the cause carried by `invalidResponse`.
///
/// `code` is for programs (an undecryptable answer points at the registration's encryption key, a
/// foreign redeem URL at the backend's data, the others at the backend or a proxy); `reason` is
/// the text for a person and for logs. Never the request's signature. Equal when the codes are.
public struct InvalidResponse: CodedError {
    public struct Code: ErrorCode, CaseIterable {
        public let rawValue: String

        /// Not JSON, the wrong content type or none, wrong field types or missing fields,
        /// truncated, or no body (204): not the `{"operations":[…]}` answer.
        public static let malformed = Code(rawValue: "malformed")
        /// Larger than 1 MiB: the transport cut it off, and nothing of it was read.
        public static let tooLarge = Code(rawValue: "tooLarge")
        /// The bytes are not an HTTP answer at all (another protocol on the port).
        public static let notHTTP = Code(rawValue: "notHTTP")
        /// Some operations' redeem URL is not on the backend that returned them: those were
        /// dropped and will not be redeemed; the backend's other operations are still returned.
        public static let foreignRedeemUrl = Code(rawValue: "foreignRedeemUrl")
        /// The answer does not decrypt with the registration's encryption key, or is not the
        /// media type asked for: JSON when `application/jose` was asked, or a JWE when JSON was
        /// (docs/ARCHITECTURE.md, "Encrypted answers"). Nothing of it is used.
        public static let undecryptable = Code(rawValue: "undecryptable")

        /// The codes this version produces.
        public static let allCases: [Code] = [.malformed, .tooLarge, .notHTTP, .foreignRedeemUrl, .undecryptable]
    }

    /// The name the fetch error's JSON (`invalidResponseKind`) and older callers use for ``code``.
    public typealias Kind = Code

    public let code: Code
    /// What was wrong, as a sentence.
    public let reason: String

    /// ``code``, under the name the fetch error's JSON uses.
    public var kind: Code { code }

    public init(_ code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// A ``Code/malformed`` answer: what the decoder finds wrong with it.
    init(_ reason: String) {
        self.init(.malformed, reason: reason)
    }
}

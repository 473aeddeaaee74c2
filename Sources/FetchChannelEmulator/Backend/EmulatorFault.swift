/// A fault the emulator injects into one endpoint's answers, to exercise a client's error paths
/// against a real socket.
public struct EmulatorFault: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Wait `seconds`, then answer normally.
        case delay
        /// Answer `status` with a small JSON error body instead of processing the request.
        case status
        /// Answer 200 with a body that is not JSON.
        case garbage
        /// Answer 200 with a JSON-looking body larger than 1 MiB.
        case oversized
        /// Close the connection without answering.
        case close
        /// Answer normally but announce one byte more than is sent, then keep the connection open
        /// until the client leaves or the server's idle timeout passes.
        case hang
        /// Answer 200 with a valid body but `Content-Type: text/html`.
        case wrongContentType = "wrong-content-type"
        /// Answer 200 `application/jose` with a JWE made for a different, fresh key: a client
        /// cannot decrypt it.
        case undecryptable
    }

    public let endpoint: EmulatorEndpoint
    public let kind: Kind
    /// For `.delay`: how long to wait.
    public let seconds: Double?
    /// For `.status`: the status to answer.
    public let status: Int?
    /// How many requests the fault applies to; nil means until the faults are cleared.
    public let count: Int?

    public init(endpoint: EmulatorEndpoint, kind: Kind, seconds: Double? = nil, status: Int? = nil, count: Int? = nil) {
        self.endpoint = endpoint
        self.kind = kind
        self.seconds = seconds
        self.status = status
        self.count = count
    }

    /// Checks the parameters a kind needs; the control API answers 400 with this text.
    func validationProblem() -> String? {
        switch kind {
        case .delay:
            guard let seconds, seconds >= 0, seconds <= 3_600 else { return "a delay fault needs seconds in 0...3600" }
        case .status:
            guard let status, (200...599).contains(status) else { return "a status fault needs a status in 200...599" }
        default:
            break
        }
        if let count, count < 1 { return "count must be at least 1" }
        return nil
    }
}

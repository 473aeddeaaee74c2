/// The backend's answer to a successful redemption (`POST …/token/redeem/{kind}` -> 200): what
/// the app needs to carry the operation on.
public struct RedemptionAnswer: Sendable, Hashable {
    /// The backend's status code for the operation (1200 when it started).
    public let statusCode: Int
    /// The UAF request the authenticator processes next, as sent.
    public let uafRequest: String
    /// `Reg`, `Auth` or `Dereg`.
    public let op: String
    /// How long the operation stays valid, in milliseconds.
    public let lifetimeMillis: Int64

    public init(statusCode: Int, uafRequest: String, op: String, lifetimeMillis: Int64) {
        self.statusCode = statusCode
        self.uafRequest = uafRequest
        self.op = op
        self.lifetimeMillis = lifetimeMillis
    }
}

/// A successful redemption: the backend's 200 answer, `{statusCode, uafRequest, op, lifetimeMillis}`.
///
/// Read leniently: a member that is missing or of another type is nil here, and every member is
/// also in ``body`` as sent, for what this type does not model.
public struct RedeemedOperation: Sendable, Hashable {
    /// The backend's status code (nevisFIDO: 1200 for OK).
    public let statusCode: Int64?
    /// The FIDO UAF request to hand to the authenticator (a JSON text).
    public let uafRequest: String?
    /// `Reg`, `Auth` or `Dereg`.
    public let op: String?
    /// How long the started operation stays valid.
    public let lifetimeMillis: Int64?
    /// The whole answer object.
    public let body: [String: JSONValue]

    public init(body: [String: JSONValue]) {
        self.body = body
        statusCode = Self.integer(body["statusCode"])
        lifetimeMillis = Self.integer(body["lifetimeMillis"])
        if case .string(let text)? = body["uafRequest"] { uafRequest = text } else { uafRequest = nil }
        if case .string(let text)? = body["op"] { op = text } else { op = nil }
    }

    private static func integer(_ value: JSONValue?) -> Int64? {
        switch value {
        case .integer(let number)?: number
        case .number(let number)?: Int64(exactly: number)
        default: nil
        }
    }
}

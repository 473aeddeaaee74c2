/// An HTTP status code, with names for the ones the wire contract uses
/// (docs/ARCHITECTURE.md, "Wire contract").
public struct HTTPStatus: Sendable, Hashable, CustomStringConvertible {
    /// The three-digit code.
    public let code: Int

    public init(_ code: Int) {
        self.code = code
    }

    public var description: String { String(code) }

    public static let ok = HTTPStatus(200)
    public static let created = HTTPStatus(201)
    public static let badRequest = HTTPStatus(400)
    public static let unauthorized = HTTPStatus(401)
    public static let forbidden = HTTPStatus(403)
    public static let notFound = HTTPStatus(404)
    public static let methodNotAllowed = HTTPStatus(405)
    public static let notAcceptable = HTTPStatus(406)
    public static let gone = HTTPStatus(410)
    public static let unsupportedMediaType = HTTPStatus(415)
    public static let misdirectedRequest = HTTPStatus(421)
    public static let tooManyRequests = HTTPStatus(429)
    public static let internalServerError = HTTPStatus(500)
    public static let notImplemented = HTTPStatus(501)
    public static let serviceUnavailable = HTTPStatus(503)
    public static let insufficientStorage = HTTPStatus(507)
}

/// How the backend dispatched an out-of-band operation to the device.
///
/// Channels this package does not know are kept as `.other` with their wire name: a new backend
/// channel must never make a fetch fail or an operation disappear.
public enum DispatchChannel: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `firebase-cloud-messaging`: a push notification.
    case pushNotification
    /// `png-qr-code`: a QR code the user scans.
    case qrCode
    /// `link`: a link the user opens.
    case link
    /// Any other wire value, kept verbatim.
    case other(String)

    public init(wireValue: String) {
        switch wireValue {
        case "firebase-cloud-messaging": self = .pushNotification
        case "png-qr-code": self = .qrCode
        case "link": self = .link
        default: self = .other(wireValue)
        }
    }

    /// The value on the wire.
    public var wireValue: String {
        switch self {
        case .pushNotification: "firebase-cloud-messaging"
        case .qrCode: "png-qr-code"
        case .link: "link"
        case .other(let value): value
        }
    }

    public var description: String { wireValue }

    public init(from decoder: any Decoder) throws {
        self.init(wireValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wireValue)
    }
}

/// One out-of-band operation that a backend holds for this device.
public struct PendingOutOfBandOperation: Sendable, Hashable, Codable {
    /// What the device needs to redeem the operation.
    public struct RedeemData: Sendable, Hashable, Codable {
        /// Redeemed exactly once; with the redeem URL's origin, the operation's ``identity``.
        public let token: String
        /// Where the token is redeemed: for a fetched operation, always on the backend that returned it.
        public let redeemUrl: String

        public init(token: String, redeemUrl: String) {
            self.token = token
            self.redeemUrl = redeemUrl
        }

        /// The longest token accepted, in UTF-8 bytes. A real one is a few dozen; the bound keeps
        /// what a backend sends from growing the redeemed-token file or the redaction of an answer.
        public static let maximumTokenBytes = 1_024
        /// The longest redeem URL accepted, in UTF-8 bytes.
        public static let maximumRedeemURLBytes = 8_192

        /// Why the token or the redeem URL is out of bounds (an empty token, or one of them longer
        /// than its maximum); nil when both are within them. `path` names the object in the reason,
        /// and is made only for one: it runs for every fetched operation.
        func sizeProblem(at path: @autoclosure () -> String) -> String? {
            if token.isEmpty { return "\(path()).token is empty." }
            if token.utf8.count > Self.maximumTokenBytes {
                return "\(path()).token is longer than \(Self.maximumTokenBytes) bytes."
            }
            if redeemUrl.utf8.count > Self.maximumRedeemURLBytes {
                return "\(path()).redeemUrl is longer than \(Self.maximumRedeemURLBytes) bytes."
            }
            return nil
        }
    }

    public struct Payload: Sendable, Hashable, Codable {
        public let contentType: String
        public let version: String
        public let redeemData: RedeemData
        /// Backend- or app-specific content, kept as sent.
        public let data: JSONValue?

        public init(contentType: String, version: String, redeemData: RedeemData, data: JSONValue? = nil) {
            self.contentType = contentType
            self.version = version
            self.redeemData = redeemData
            self.data = data
        }
    }

    public let creationTimeInEpochMillis: Int64
    public let dispatchChannel: DispatchChannel
    public let payload: Payload
    public let additionalInformation: JSONValue?
    /// The base URL of the backend that returned it (not part of the backend's JSON).
    public let server: String

    public init(
        creationTimeInEpochMillis: Int64, dispatchChannel: DispatchChannel, payload: Payload,
        additionalInformation: JSONValue? = nil, server: String
    ) {
        self.creationTimeInEpochMillis = creationTimeInEpochMillis
        self.dispatchChannel = dispatchChannel
        self.payload = payload
        self.additionalInformation = additionalInformation
        self.server = server
    }

    /// The redeem token; the operation's ``identity`` is the token at its redeem URL's origin.
    public var token: String { payload.redeemData.token }
}

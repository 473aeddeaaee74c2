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

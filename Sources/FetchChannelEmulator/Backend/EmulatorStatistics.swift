/// Counters the emulator keeps; `/_emulator/stats` returns them as
/// `{"requests": {endpoint: n}, "redemptions": {token: n}, "rejections": {code: n}}`.
public struct EmulatorStatistics: Sendable, Hashable, Codable {
    /// Requests received per endpoint (`targets`, `operations`, `redeem`), faulted ones included.
    public var requests: [String: Int]
    /// Successful (200) redemptions per redeem token: exactly-once shows as 1.
    public var redemptions: [String: Int]
    /// Refused Device-Signatures and registrations per internal code. Finer than the wire answer,
    /// which does not tell a caller whether a dispatch target exists: `UNKNOWN_DISPATCH_TARGET` here
    /// is `INVALID_SIGNATURE` there (see `DeviceRequestRefusal`).
    public var rejections: [String: Int]

    public init(requests: [String: Int] = [:], redemptions: [String: Int] = [:], rejections: [String: Int] = [:]) {
        self.requests = requests
        self.redemptions = redemptions
        self.rejections = rejections
    }

    public func requests(to endpoint: EmulatorEndpoint) -> Int { requests[endpoint.rawValue] ?? 0 }
}

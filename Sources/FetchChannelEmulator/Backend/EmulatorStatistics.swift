/// Counters the emulator keeps; `/_emulator/stats` returns them as
/// `{"requests": {endpoint: n}, "redemptions": {token: n}}`.
public struct EmulatorStatistics: Sendable, Hashable, Codable {
    /// Requests received per endpoint (`targets`, `operations`, `redeem`), faulted ones included.
    public var requests: [String: Int]
    /// Successful (200) redemptions per redeem token: exactly-once shows as 1.
    public var redemptions: [String: Int]

    public init(requests: [String: Int] = [:], redemptions: [String: Int] = [:]) {
        self.requests = requests
        self.redemptions = redemptions
    }

    public func requests(to endpoint: EmulatorEndpoint) -> Int { requests[endpoint.rawValue] ?? 0 }
}

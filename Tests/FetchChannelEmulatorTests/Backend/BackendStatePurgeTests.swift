import Testing

@testable import FetchChannelEmulator

/// The purge that makes room once the backend holds its most operations.
@Suite struct BackendStatePurgeTests {
    static let start: Int64 = 1_750_000_000_000

    static func operation(_ token: String, device: String, expiresAt: Int64) throws -> StoredOperation {
        try #require(
            StoredOperation(
                deviceId: device, kind: .authentication, creationTimeMillis: start, expiresAtMillis: expiresAt,
                channel: "link", token: token, redeemURL: "https://backend.example/redeem", data: nil))
    }

    /// Operations that expired over an hour ago go, and so does every device left without any:
    /// before, the device index kept an empty entry per device for ever.
    @Test func aPurgeForgetsExpiredOperationsAndTheDevicesLeftWithout() throws {
        let state = BackendState(operationCapacity: 60)
        for index in 0..<40 {
            #expect(
                state.add(
                    try Self.operation("old-\(index)", device: "d-\(index)", expiresAt: Self.start + 1_000),
                    nowMillis: Self.start) == .added)
        }
        for index in 0..<20 {
            #expect(
                state.add(
                    try Self.operation("many-\(index)", device: "busy", expiresAt: Self.start + 1_000),
                    nowMillis: Self.start) == .added)
        }
        let later = Self.start + 2 * 3_600_000
        #expect(
            state.add(try Self.operation("kept", device: "busy", expiresAt: later + 60_000), nowMillis: later) == .added
        )
        #expect(state.indexedDevices == 1)
        #expect(state.pendingOperations(for: "busy", nowMillis: later).map(\.token) == ["kept"])
        #expect(state.redeem(token: "old-0", kind: .authentication, nowMillis: later) == .unknownToken)
    }
}

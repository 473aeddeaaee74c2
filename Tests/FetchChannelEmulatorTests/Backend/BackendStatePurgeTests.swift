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

    /// A full store of operations that cannot be dropped yet refuses further dispatches without
    /// going through them each time: before, every refused dispatch scanned the whole store (up
    /// to 200,000 operations) under the lock every request waits for. Once the earliest expiry is
    /// an hour past, one scan makes room.
    @Test func aFullStoreOfLiveOperationsIsNotScannedOnEveryDispatch() throws {
        let state = BackendState(operationCapacity: 4)
        let expiry = Self.start + 60_000
        for index in 0..<4 {
            #expect(
                state.add(
                    try Self.operation("live-\(index)", device: "d-\(index)", expiresAt: expiry), nowMillis: Self.start)
                    == .added)
        }
        for index in 0..<100 {
            let now = Self.start + Int64(index) * 36_000  // up to an hour past the expiry, not beyond
            #expect(
                state.add(try Self.operation("over-\(index)", device: "other", expiresAt: now + 60_000), nowMillis: now)
                    == .full)
        }
        #expect(state.purgeScans == 0)

        let later = expiry + BackendState.purgeGraceMillis + 1
        #expect(
            state.add(try Self.operation("after", device: "other", expiresAt: later + 60_000), nowMillis: later)
                == .added)
        #expect(state.redeem(token: "live-0", kind: .authentication, nowMillis: later) == .unknownToken)
        #expect(state.purgeScans == 1)
    }

    /// A fetch drops the device's operations that expired over an hour ago, as a purge would, and
    /// its redeemed ones from its list: before, they stayed until the store was full, and every
    /// fetch of the device went through them.
    @Test func aFetchDropsTheDevicesLongExpiredAndRedeemedOperations() throws {
        let state = BackendState()
        for index in 0..<50 {
            #expect(
                state.add(
                    try Self.operation("old-\(index)", device: "phone", expiresAt: Self.start + 1_000),
                    nowMillis: Self.start) == .added)
        }
        let later = Self.start + 2 * 3_600_000
        for token in ["kept", "redeemed"] {
            #expect(
                state.add(try Self.operation(token, device: "phone", expiresAt: later + 60_000), nowMillis: later)
                    == .added)
        }
        #expect(
            state.redeem(token: "redeemed", kind: .authentication, nowMillis: later)
                == .redeemed(lifetimeMillis: later + 60_000 - Self.start, kind: .authentication))
        #expect(state.listedOperations(ofDevice: "phone") == 52)

        #expect(state.pendingOperations(for: "phone", nowMillis: later).map(\.token) == ["kept"])
        #expect(state.listedOperations(ofDevice: "phone") == 1)
        #expect(state.redeem(token: "old-0", kind: .authentication, nowMillis: later) == .unknownToken)
        #expect(state.redeem(token: "redeemed", kind: .authentication, nowMillis: later) == .alreadyRedeemed)
        #expect(state.purgeScans == 0)
    }
}

import Testing

@testable import FetchChannelEmulator

/// A device's bound on pending operations, checked from a count kept as operations come and go:
/// the device's list (where redeemed and expired operations stay until a purge) is gone through
/// only when a counted operation may have expired. Before, every dispatch to a full device went
/// through it, under the lock every request waits for.
@Suite struct BackendStateDeviceBoundTests {
    static let start: Int64 = 1_750_000_000_000

    static func operation(_ token: String, expiresAt: Int64, device: String = "phone") throws -> StoredOperation {
        try #require(
            StoredOperation(
                deviceId: device, kind: .authentication, creationTimeMillis: start, expiresAtMillis: expiresAt,
                channel: "link", token: token, redeemURL: "https://backend.example/redeem", data: nil))
    }

    static func redeemed(_ lifetimeMillis: Int64) -> BackendState.RedeemOutcome {
        .redeemed(lifetimeMillis: lifetimeMillis, kind: .authentication)
    }

    /// Refusals and a redemption that makes room are decided without going through the list; a
    /// redeemed token still answers as redeemed after a recount has dropped it from the list.
    @Test func aFullDeviceIsRefusedAndRedemptionMakesRoomWithoutARecount() throws {
        let state = BackendState(pendingCapacityPerDevice: 3)
        let now = Self.start
        let (soon, later) = (now + 60_000, now + 120_000)
        for (token, expiry) in [("op-0", later), ("op-1", soon), ("op-2", later)] {
            #expect(state.add(try Self.operation(token, expiresAt: expiry), nowMillis: now) == .added)
        }
        for index in 0..<100 {
            #expect(state.add(try Self.operation("over-\(index)", expiresAt: later), nowMillis: now) == .deviceFull)
        }
        #expect(state.add(try Self.operation("other", expiresAt: later, device: "tablet"), nowMillis: now) == .added)
        #expect(state.recounts(ofDevice: "phone") == 0)

        #expect(state.redeem(token: "op-1", kind: .authentication, nowMillis: now) == Self.redeemed(60_000))
        #expect(state.add(try Self.operation("op-3", expiresAt: later), nowMillis: now) == .added)
        #expect(state.add(try Self.operation("op-4", expiresAt: later), nowMillis: now) == .deviceFull)
        #expect(state.recounts(ofDevice: "phone") == 0)
        #expect(state.pendingOperations(for: "phone", nowMillis: now).map(\.token) == ["op-0", "op-2", "op-3"])

        // The redeemed operation had the earliest expiry: once it is past, the device is recounted
        // once, has nothing expired, and is refused again without a recount.
        #expect(state.add(try Self.operation("op-5", expiresAt: later), nowMillis: soon) == .deviceFull)
        #expect(state.recounts(ofDevice: "phone") == 1)
        #expect(state.add(try Self.operation("op-6", expiresAt: later), nowMillis: soon) == .deviceFull)
        #expect(state.recounts(ofDevice: "phone") == 1)
        #expect(state.redeem(token: "op-1", kind: .authentication, nowMillis: soon) == .alreadyRedeemed)
    }

    /// Past an expiry the device is recounted once and takes operations again; set back before it,
    /// the expired operation is pending again and counts again, as the answer lists it.
    @Test func anExpiryMakesRoomAndASetBackClockCountsTheOperationAgain() throws {
        let state = BackendState(pendingCapacityPerDevice: 3)
        let now = Self.start
        #expect(state.add(try Self.operation("short", expiresAt: now + 1_000), nowMillis: now) == .added)
        for index in 0..<2 {
            #expect(state.add(try Self.operation("long-\(index)", expiresAt: now + 60_000), nowMillis: now) == .added)
        }
        #expect(state.add(try Self.operation("refused", expiresAt: now + 60_000), nowMillis: now + 999) == .deviceFull)
        #expect(state.recounts(ofDevice: "phone") == 0)

        let later = now + 1_000
        #expect(state.add(try Self.operation("after", expiresAt: now + 60_000), nowMillis: later) == .added)
        #expect(state.recounts(ofDevice: "phone") == 1)
        for index in 0..<10 {
            #expect(
                state.add(try Self.operation("over-\(index)", expiresAt: now + 60_000), nowMillis: later) == .deviceFull
            )
        }
        #expect(state.recounts(ofDevice: "phone") == 1)

        #expect(state.pendingOperations(for: "phone", nowMillis: now).count == 4)
        #expect(state.add(try Self.operation("back", expiresAt: now + 60_000), nowMillis: now) == .deviceFull)
        #expect(state.redeem(token: "short", kind: .authentication, nowMillis: now) == Self.redeemed(1_000))
        #expect(state.add(try Self.operation("back", expiresAt: now + 60_000), nowMillis: now) == .deviceFull)
        #expect(
            state.redeem(token: "long-0", kind: .authentication, nowMillis: now) == Self.redeemed(60_000))
        #expect(state.add(try Self.operation("back", expiresAt: now + 60_000), nowMillis: now) == .added)
    }
}

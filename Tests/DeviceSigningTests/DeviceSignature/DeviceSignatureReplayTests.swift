import DeviceSigning
import FetchChannelWire
import Foundation
import Testing

@Suite struct DeviceSignatureReplayTests {
    typealias F = DeviceSignatureFixtures
    static let tolerance: Int64 = 60_000

    private struct Setup {
        let key: P256.Signing.PrivateKey
        let clock: ManualWallClock
        let verifier: DeviceSignatureVerifier

        init(
            capacity: Int = 100_000, quota: Int = DeviceSignatureVerifier.defaultReplayQuotaPerDispatchTarget,
            targets: [String] = [F.target]
        ) throws {
            key = try F.fixtureKey()
            clock = ManualWallClock(millis: F.t0)
            verifier = try F.verifier(
                key: key.publicKey, targets: targets, clock: clock,
                toleranceMillis: DeviceSignatureReplayTests.tolerance,
                capacity: capacity, quota: quota)
        }

        /// A value for `requestId` created at `creation` (absolute), for `target`.
        func value(requestId: String, creation: Int64, target: String = F.target) throws -> String {
            try DeviceSignatureSigner(key: key, dispatchTargetId: target, clock: ManualWallClock(millis: creation)) {
                requestId
            }
            .headerValue()
        }
    }

    @Test func sameValueTwiceIsAReplay() throws {
        let setup = try Setup()
        let value = try setup.value(requestId: "r1", creation: F.t0)
        #expect(throws: Never.self) { try setup.verifier.verify(value).get() }
        #expect(setup.verifier.verify(value) == .failure(.replayedRequest("r1")))
        setup.clock.advance(byMillis: Self.tolerance)
        #expect(setup.verifier.verify(value) == .failure(.replayedRequest("r1")))
    }

    /// A server clock set back after an entry expired: the value is fresh again, and its request
    /// id is no longer remembered. It is refused, while a request made after the step still passes.
    @Test func aClockSetBackDoesNotReopenAForgottenRequest() throws {
        let setup = try Setup()
        let value = try setup.value(requestId: "r1", creation: F.t0)
        #expect(throws: Never.self) { try setup.verifier.verify(value).get() }
        // Forward past the entry's expiry; a verification drops it.
        setup.clock.set(millis: F.t0 + Self.tolerance + 1)
        #expect(throws: Never.self) {
            try setup.verifier.verify(try setup.value(requestId: "r2", creation: F.t0 + Self.tolerance + 1)).get()
        }
        #expect(setup.verifier.replayCacheCount == 1, "r1 was dropped")
        setup.clock.set(millis: F.t0 + 1)
        #expect(setup.verifier.verify(value) == .failure(.replayedRequest("r1")))
        // A request created after the forgotten one's window is still accepted.
        setup.clock.set(millis: F.t0 + Self.tolerance + 2)
        #expect(throws: Never.self) {
            try setup.verifier.verify(try setup.value(requestId: "r3", creation: F.t0 + 2)).get()
        }
    }

    @Test func requestIdsAreScopedPerDispatchTarget() throws {
        let setup = try Setup(targets: [F.target, "second-target"])
        #expect(throws: Never.self) {
            try setup.verifier.verify(try setup.value(requestId: "same", creation: F.t0)).get()
        }
        #expect(throws: Never.self) {
            try setup.verifier.verify(try setup.value(requestId: "same", creation: F.t0, target: "second-target")).get()
        }
        #expect(
            setup.verifier.verify(try setup.value(requestId: "same", creation: F.t0 + 1)).failureCode
                == "REPLAYED_REQUEST")
    }

    @Test func requestIdIsAcceptedAgainOnlyAfterTheWindow() throws {
        let setup = try Setup()
        #expect(throws: Never.self) { try setup.verifier.verify(try setup.value(requestId: "r", creation: F.t0)).get() }
        // Remembered until max(c, now) + tolerance = t0 + tolerance, inclusive.
        setup.clock.set(millis: F.t0 + Self.tolerance)
        #expect(
            setup.verifier.verify(try setup.value(requestId: "r", creation: F.t0 + Self.tolerance)).failureCode
                == "REPLAYED_REQUEST")
        setup.clock.set(millis: F.t0 + Self.tolerance + 1)
        #expect(throws: Never.self) {
            try setup.verifier.verify(try setup.value(requestId: "r", creation: F.t0 + Self.tolerance + 1)).get()
        }
    }

    /// A creation time at the past edge of the tolerance must not make the entry expire at once:
    /// the request id stays blocked for a whole window from the moment it was accepted.
    @Test func pastSkewedCreationTimeDoesNotShortenTheReplayLifetime() throws {
        let setup = try Setup()
        #expect(throws: Never.self) {
            try setup.verifier.verify(try setup.value(requestId: "old", creation: F.t0 - Self.tolerance)).get()
        }
        for later in [Int64(1), Self.tolerance / 2, Self.tolerance] {
            setup.clock.set(millis: F.t0 + later)
            let fresh = try setup.value(requestId: "old", creation: F.t0 + later)
            #expect(setup.verifier.verify(fresh).failureCode == "REPLAYED_REQUEST", "at t0 + \(later)")
        }
        setup.clock.set(millis: F.t0 + Self.tolerance + 1)
        #expect(throws: Never.self) {
            try setup.verifier.verify(try setup.value(requestId: "old", creation: F.t0 + Self.tolerance + 1)).get()
        }
    }

    /// A creation time at the future edge keeps the same value fresh until c + tolerance =
    /// t0 + 2 tolerances: the entry must last that long.
    @Test func futureSkewedValueCannotBeReplayedWhileFresh() throws {
        let setup = try Setup()
        let value = try setup.value(requestId: "ahead", creation: F.t0 + Self.tolerance)
        #expect(throws: Never.self) { try setup.verifier.verify(value).get() }
        setup.clock.set(millis: F.t0 + 2 * Self.tolerance)
        #expect(setup.verifier.verify(value).failureCode == "REPLAYED_REQUEST")
        setup.clock.set(millis: F.t0 + 2 * Self.tolerance + 1)
        #expect(setup.verifier.verify(value).failureCode == "CLOCK_SKEW_TOO_BIG")
    }

    /// Exhaustive over a grid: whatever the creation time of an accepted value, replaying it is
    /// never accepted, at any later time.
    @Test func noReplayIsEverAcceptedAcrossTheWindow() throws {
        let key = try F.fixtureKey()
        let step = Int(Self.tolerance / 4)
        for creationOffset in stride(from: -Self.tolerance, through: Self.tolerance, by: step) {
            let clock = ManualWallClock(millis: F.t0)
            let verifier = try F.verifier(key: key.publicKey, clock: clock, toleranceMillis: Self.tolerance)
            let value = try DeviceSignatureSigner(
                key: key, dispatchTargetId: F.target, clock: ManualWallClock(millis: F.t0 + creationOffset)
            ).headerValue()
            #expect(throws: Never.self) { try verifier.verify(value).get() }
            let freshUntil: Int64 = F.t0 + creationOffset + Self.tolerance
            var times: [Int64] = Array(stride(from: F.t0, through: F.t0 + 3 * Self.tolerance, by: step))
            times += [freshUntil, freshUntil + 1]
            for time in times.sorted() {
                clock.set(millis: time)
                let code = verifier.verify(value).failureCode
                #expect(
                    code == "REPLAYED_REQUEST" || code == "CLOCK_SKEW_TOO_BIG",
                    "creation t0\(creationOffset >= 0 ? "+" : "")\(creationOffset), replay at t0+\(time - F.t0): \(code ?? "ACCEPTED")"
                )
            }
        }
    }

    @Test func cacheIsBoundedAndNeverEvictsALiveEntry() throws {
        let setup = try Setup(capacity: 3)
        for id in ["a", "b", "c"] {
            #expect(throws: Never.self) {
                try setup.verifier.verify(try setup.value(requestId: id, creation: F.t0)).get()
            }
        }
        #expect(setup.verifier.replayCacheCount == 3)
        // Full of live entries: a new request is refused, a replay is still recognised as one.
        #expect(
            setup.verifier.verify(try setup.value(requestId: "d", creation: F.t0))
                == .failure(.replayCacheFull(capacity: 3)))
        #expect(
            setup.verifier.verify(try setup.value(requestId: "a", creation: F.t0 + 1))
                == .failure(.replayedRequest("a")))
        #expect(setup.verifier.replayCacheCount == 3)

        // Still full at the last millisecond of the window; free one millisecond later.
        setup.clock.set(millis: F.t0 + Self.tolerance)
        #expect(
            setup.verifier.verify(try setup.value(requestId: "d", creation: F.t0 + Self.tolerance)).failureCode
                == "REPLAY_CACHE_FULL")
        setup.clock.set(millis: F.t0 + Self.tolerance + 1)
        #expect(throws: Never.self) {
            try setup.verifier.verify(try setup.value(requestId: "d", creation: F.t0 + Self.tolerance + 1)).get()
        }
        #expect(setup.verifier.replayCacheCount == 1)
    }

    /// One dispatch target sending far more than its quota (the default, 1,000 live request ids)
    /// is refused with 429 and a Retry-After; another dispatch target is served as before.
    @Test func oneDispatchTargetFloodingDoesNotAffectAnother() throws {
        let setup = try Setup(targets: [F.target, "quiet-target"])
        let quota = DeviceSignatureVerifier.defaultReplayQuotaPerDispatchTarget
        var accepted = 0
        var refused: [DeviceSignatureRejection] = []
        for index in 0..<(quota + 200) {
            switch setup.verifier.verify(try setup.value(requestId: "flood-\(index)", creation: F.t0)) {
            case .success: accepted += 1
            case .failure(let rejection): refused.append(rejection)
            }
        }
        #expect(accepted == quota)
        #expect(refused.count == 200)
        // Entries made at t0 are remembered until t0 + tolerance inclusive: 60.001 s from now.
        #expect(refused.allSatisfy { $0 == .replayQuotaExceeded(quota: quota, retryAfterSeconds: 61) })
        let replay = try setup.value(requestId: "flood-0", creation: F.t0 + 1)
        #expect(setup.verifier.verify(replay) == .failure(.replayedRequest("flood-0")), "a replay is still a replay")
        for index in 0..<50 {
            let value = try setup.value(requestId: "quiet-\(index)", creation: F.t0, target: "quiet-target")
            #expect(throws: Never.self) { try setup.verifier.verify(value).get() }
        }
        #expect(setup.verifier.replayCacheCount == quota + 50)
    }

    /// Retry-After counts down to the moment the dispatch target's oldest entry is dropped
    /// (rounded up to whole seconds, at least 1), and then that target is served again.
    @Test func retryAfterIsTheTimeUntilTheOldestEntryOfThatTargetExpires() throws {
        let setup = try Setup(quota: 2, targets: [F.target, "other"])
        func accept(_ requestId: String, _ creation: Int64, target: String = F.target) throws {
            let value = try setup.value(requestId: requestId, creation: creation, target: target)
            _ = try setup.verifier.verify(value).get()
        }
        // The oldest by expiry, not by insertion: "late" expires at t0 + 2 tol, "early" at t0 + tol.
        try accept("late", F.t0 + Self.tolerance)
        try accept("early", F.t0 - Self.tolerance)
        try accept("o", F.t0, target: "other")
        let expectations: [(Int64, Int64)] = [
            (0, 61), (999, 60), (1_000, 60), (1_001, 59), (Self.tolerance - 1, 1), (Self.tolerance, 1),
        ]
        for (elapsed, seconds) in expectations {
            setup.clock.set(millis: F.t0 + elapsed)
            let value = try setup.value(requestId: "new-\(elapsed)", creation: F.t0 + elapsed)
            let expected = DeviceSignatureRejection.replayQuotaExceeded(quota: 2, retryAfterSeconds: seconds)
            #expect(setup.verifier.verify(value) == .failure(expected), "t0 + \(elapsed)")
        }
        let later = F.t0 + Self.tolerance + 1
        setup.clock.set(millis: later)
        try accept("after", later)
        let replayed = try setup.value(requestId: "late", creation: later)
        #expect(setup.verifier.verify(replayed).failureCode == "REPLAYED_REQUEST")
    }

    @Test func expiredEntriesAreDroppedSoonestFirst() throws {
        let setup = try Setup(capacity: 2)
        // "late" expires at t0 + 2 tol, "early" at t0 + tol.
        #expect(throws: Never.self) {
            try setup.verifier.verify(try setup.value(requestId: "late", creation: F.t0 + Self.tolerance)).get()
        }
        #expect(throws: Never.self) {
            try setup.verifier.verify(try setup.value(requestId: "early", creation: F.t0 - Self.tolerance)).get()
        }
        setup.clock.set(millis: F.t0 + Self.tolerance + 1)
        #expect(throws: Never.self) {
            try setup.verifier.verify(try setup.value(requestId: "new", creation: F.t0 + Self.tolerance + 1)).get()
        }
        #expect(
            setup.verifier.verify(try setup.value(requestId: "late", creation: F.t0 + Self.tolerance + 1)).failureCode
                == "REPLAYED_REQUEST")
        #expect(
            setup.verifier.verify(try setup.value(requestId: "other", creation: F.t0 + Self.tolerance + 1)).failureCode
                == "REPLAY_CACHE_FULL")
    }

    /// Thousands of concurrent verifications: each request id is accepted exactly once.
    @Test func concurrentVerificationAcceptsEachRequestIdExactlyOnce() async throws {
        let setup = try Setup()
        let distinct = 1_000
        let copies = 4
        var values: [String] = []
        for index in 0..<distinct {
            let requestId = "concurrent-\(index)"
            // Each copy is its own signature over the same request id, as a retrying attacker would send.
            for copy in 0..<copies {
                values.append(try setup.value(requestId: requestId, creation: F.t0 + Int64(copy)))
            }
        }
        // Seeded: a run that fails fails again, in the same order.
        var random = SplitMix64(seed: 0x5EED_0003)
        values.shuffle(using: &random)
        let verifier = setup.verifier
        let outcomes = await withTaskGroup(of: (String?, String?).self) { group in
            for value in values {
                group.addTask {
                    switch verifier.verify(value) {
                    case .success(let verified): (verified.requestId, nil)
                    case .failure(let rejection): (nil, rejection.code)
                    }
                }
            }
            var all: [(String?, String?)] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        let accepted = outcomes.compactMap(\.0)
        #expect(outcomes.count == distinct * copies)
        #expect(accepted.count == distinct)
        #expect(Set(accepted).count == distinct)
        #expect(outcomes.compactMap(\.1).allSatisfy { $0 == "REPLAYED_REQUEST" })
        #expect(verifier.replayCacheCount == distinct)
    }
}

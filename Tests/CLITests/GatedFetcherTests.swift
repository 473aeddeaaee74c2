import FetchChannel
import FetchChannelTestSupport
import Testing

@testable import FetchChannelBenchmarks

/// The trigger-day row holds each fetch at a gate. A row that fails halfway opens the gate, so no
/// fetch and no trigger waiting for it stays suspended, and each of its waits ends.
@Suite struct GatedFetcherTests {
    /// Answers at once, with nothing.
    struct Instant: PendingOperationsFetching {
        func hasRegistration() async -> Bool { true }
        func fetch() async -> PendingOutOfBandOperationsResult {
            PendingOutOfBandOperationsResult(operations: [], errors: [])
        }
    }

    /// Only a bound on a hang: a fetch that is let through returns at once.
    static let bound = LooseTimeBounds.scaled(.seconds(20))

    @Test func openingLetsTheHeldFetchAndEveryLaterOneThrough() async {
        let gate = GatedFetcher(Instant())
        let held = Task { await gate.fetch() }
        #expect(await gate.waitUntilHeld(within: Self.bound))
        gate.open()
        #expect(await BoundedWait.value(of: held, within: Self.bound) != nil, "the held fetch returned")
        let later = Task { await gate.fetch() }
        #expect(await BoundedWait.value(of: later, within: Self.bound) != nil, "a later fetch is not held")
        #expect(await gate.waitUntilHeld(within: Self.bound) == false, "nothing is held once open")
    }

    @Test func aWaitForAHeldFetchEnds() async {
        let gate = GatedFetcher(Instant())
        // Nothing is fetched: a wait bounded by no time at all ends at once, false.
        let unbounded = Task { await gate.waitUntilHeld(within: .zero) }
        #expect(await BoundedWait.value(of: unbounded, within: Self.bound) == false)
        // Opening the gate ends a wait that would otherwise last its whole bound.
        let waiting = Task { await gate.waitUntilHeld(within: .seconds(3_600)) }
        while !gate.hasWatcher { await Task.yield() }
        gate.open()
        #expect(await BoundedWait.value(of: waiting, within: Self.bound) == false)
    }

    @Test func aBoundedWaitForATaskEnds() async {
        let gate = GatedFetcher(Instant())
        let stuck = Task { await gate.fetch().operations.count }
        #expect(await BoundedWait.value(of: stuck, within: .zero) == nil, "held at the gate: no value")
        gate.open()
        #expect(await BoundedWait.value(of: stuck, within: Self.bound) == 0)
    }
}

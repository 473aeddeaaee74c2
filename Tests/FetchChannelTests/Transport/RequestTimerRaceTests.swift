import DeviceSigning
import Foundation
import Testing

@testable import FetchChannel

/// When a request races its timer: only when the transport does not keep the timeout itself, or
/// the timer is not real time (tests' timers). libcurl keeps it to the millisecond, so a real-time
/// race would only add two child tasks and a pending sleep to every request.
@Suite struct RequestTimerRaceTests {
    /// A timer that counts how often it was asked to sleep, and expires at once.
    final class CountingTimer: RequestTimer {
        let isRealTime: Bool
        private let sleeps = Locked(0)

        init(isRealTime: Bool) { self.isRealTime = isRealTime }

        var count: Int { sleeps.withLock { $0 } }

        func sleep(for duration: Duration) async throws {
            sleeps.withLock { $0 += 1 }
            try Task.checkCancellation()
        }
    }

    /// A fake that claims to keep timeouts exactly, as libcurl does, and answers at once.
    struct ExactTransport: HTTPTransport {
        var keepsTimeoutExactly: Bool { true }

        func send(_ request: TransportRequest) async -> TransportResult {
            .answer(HTTPAnswer(status: 204))
        }
    }

    static let request = TransportRequest(
        method: "GET", url: URL(string: "http://127.0.0.1:9/")!, headers: [:], body: nil, timeout: .seconds(1))

    @Test func anExactTransportWithARealTimerIsNotRaced() async {
        let timer = CountingTimer(isRealTime: true)
        let result = await ExactTransport().send(Self.request, timer: timer)
        #expect(result == .answer(HTTPAnswer(status: 204)))
        #expect(timer.count == 0, "no sleep: the transport's own timeout is the one that counts")
    }

    @Test func aTestTimerIsRacedEvenWithAnExactTransport() async {
        let timer = CountingTimer(isRealTime: false)
        _ = await ExactTransport().send(Self.request, timer: timer)
        #expect(timer.count == 1)
    }

    @Test func aTransportThatRoundsTimeoutsIsRaced() async {
        let timer = CountingTimer(isRealTime: true)
        let parked = FakeTransport { _ in
            try? await Task.sleep(for: .seconds(86_400))
            return .failure(NetworkFailure(.cancelled, detail: "cancelled"))
        }
        let result = await parked.send(Self.request, timer: timer)
        #expect(timer.count == 1)
        guard case .failure(let failure) = result else {
            Issue.record("expected a timeout, got \(result)")
            return
        }
        #expect(failure.kind == .timedOut)
    }

    @Test func theProductionPartsSkipTheRace() {
        #expect(ContinuousRequestTimer().isRealTime)
        #if os(Linux)
            #expect(CurlTransport().keepsTimeoutExactly)
        #endif
        #expect(!FakeTransport { _ in .notHTTP("") }.keepsTimeoutExactly)
    }
}

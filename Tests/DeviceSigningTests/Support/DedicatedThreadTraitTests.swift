import FetchChannelTestSupport
import Foundation
import Testing

/// The trait that keeps blocking test bodies off the cooperative pool really moves them.
@Suite(.dedicatedThread) struct DedicatedThreadTraitTests {
    private static func runsOnADedicatedThread() -> Bool {
        DedicatedThreadExecutor.isCurrentThreadDedicated
    }

    @Test func aSynchronousBodyRunsOnItsOwnThread() {
        #expect(Self.runsOnADedicatedThread())
    }

    @Test func anAsynchronousBodyRunsThereAfterASuspension() async throws {
        #expect(Self.runsOnADedicatedThread())
        try await Task.sleep(for: .milliseconds(1))
        #expect(Self.runsOnADedicatedThread())
        async let child = Self.runsOnADedicatedThread()
        #expect(await child, "a structured child task keeps the executor preference")
    }
}

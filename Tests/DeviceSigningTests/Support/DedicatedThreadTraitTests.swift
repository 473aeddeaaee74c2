import DeviceSigning
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

    @Test func anAsynchronousBodyRunsThereAfterASuspension() async {
        #expect(Self.runsOnADedicatedThread())
        // Suspends until another thread resumes it: the body must come back to its own thread.
        let elsewhere = await DedicatedThreads.run { Self.runsOnADedicatedThread() }
        #expect(!elsewhere)
        #expect(Self.runsOnADedicatedThread())
        async let child = Self.runsOnADedicatedThread()
        #expect(await child, "a structured child task keeps the executor preference")
    }

    private static func currentThread() -> ObjectIdentifier { ObjectIdentifier(Thread.current) }

    /// A suite's trait and a nested one's both apply to a test: the inner scope must not take a
    /// second slot and thread (with every slot held that way, the bodies would wait for ever).
    @Test func aNestedScopeStaysOnTheThreadItIsOn() async throws {
        let outer = Self.currentThread()
        let test = try #require(Test.current)
        let inner = Locked<ObjectIdentifier?>(nil)
        try await DedicatedThreadTrait().provideScope(for: test, testCase: nil) {
            inner.withLock { $0 = Self.currentThread() }
        }
        #expect(inner.withLock { $0 } == outer)
    }
}

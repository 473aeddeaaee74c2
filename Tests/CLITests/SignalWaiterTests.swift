import Foundation
import Testing

@testable import FetchChannelCLI

#if canImport(Glibc)
    import Glibc
#endif

/// `serve`'s wait for SIGINT, SIGTERM or SIGHUP ignores their default action while it waits, and
/// puts it back afterwards: it used to stay ignored, so a second Ctrl-C during a shutdown that
/// hangs did nothing. Serialized: both tests change the process's dispositions.
@Suite(.serialized) struct SignalWaiterTests {
    static func handler(of number: Int32) -> Int? {
        var action = sigaction()
        guard sigaction(number, nil, &action) == 0 else { return nil }
        return action.__sigaction_handler.sa_handler.map { unsafeBitCast($0, to: Int.self) } ?? 0
    }

    @Test func theDispositionsOfBeforeComeBackAfterTheWait() async {
        let before = [SIGINT, SIGTERM, SIGHUP].map(Self.handler)
        let received = await SignalWaiter.waitForTermination(onInstalled: { false })
        #expect(received == nil)
        #expect([SIGINT, SIGTERM, SIGHUP].map(Self.handler) == before)
        #expect(before.allSatisfy { $0 != unsafeBitCast(SIG_IGN, to: Int.self) }, "the test runs with them not ignored")
    }

    /// Dispatch (on Linux) installs its forwarding handler once per process, and each wait puts
    /// the disposition of before back over it: a second wait in one process used to leave the
    /// signals at their default action, so the first SIGTERM would have killed it.
    @Test func aSecondWaitInOneProcessStillCatches() async throws {
        for round in 1...2 {
            var during: [Int?]?
            let received = await SignalWaiter.waitForTermination(onInstalled: {
                during = [SIGINT, SIGTERM, SIGHUP].map(Self.handler)
                return false
            })
            #expect(received == nil)
            let handlers = try #require(during, "round \(round): onInstalled never ran")
            let neither = [0, unsafeBitCast(SIG_IGN, to: Int.self)]
            #expect(handlers.allSatisfy { $0.map { !neither.contains($0) } ?? false }, "round \(round): \(handlers)")
        }
    }
}

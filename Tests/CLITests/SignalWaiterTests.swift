import Foundation
import Testing

@testable import FetchChannelCLI

#if canImport(Glibc)
    import Glibc
#endif

/// `serve`'s wait for SIGINT, SIGTERM or SIGHUP ignores their default action while it waits, and
/// puts it back afterwards: it used to stay ignored, so a second Ctrl-C during a shutdown that
/// hangs did nothing.
@Suite struct SignalWaiterTests {
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
}

import DeviceSigning
@testable import FetchChannel
import FetchChannelEmulator
import Foundation
import Testing

extension Practices {
    /// An operation is its token at its redeem URL's origin: one backend cannot suppress another's
    /// operation.
    @Suite struct RedemptionIdentityTests {
        static func operation(_ token: String, backend: String, created: Int64) -> PendingOutOfBandOperation {
            PendingOutOfBandOperation(
                creationTimeInEpochMillis: created, dispatchChannel: .pushNotification,
                payload: .init(contentType: "application/json", version: "1",
                               redeemData: .init(token: token, redeemUrl: backend + "/nevisfido/token/redeem")),
                server: backend)
        }

        static let a = "https://a.example"
        static let b = "https://b.example"

        @Test func theSameTokenFromTwoBackendsIsTwoOperationsAndBothAreRedeemed() async {
            let redeemer = ImmediateRedeemer()
            let pipeline = RedemptionPipeline(redeemer: redeemer)
            let fromA = Self.operation("same", backend: Self.a, created: 1)
            let fromB = Self.operation("same", backend: Self.b, created: 2)
            #expect(fromA.identity == RedemptionIdentity(origin: "https://a.example:443", token: "same"))
            #expect(fromA.identity != fromB.identity)
            #expect(await pipeline.redeem(fromA).code == "redeemed")
            #expect(await pipeline.redeem(fromB) == .redeemed(identity: fromB.identity, operation: Practices.answer))
            #expect(await pipeline.redeem(fromB).code == "duplicate")
            #expect(redeemer.calls("same") == 2)
            #expect(await pipeline.redeemed == [fromA.identity, fromB.identity])
            #expect(await pipeline.redeemedTokens == ["same", "same"])
        }

        @Test func aBackendThatSendsAnotherBackendsTokenFirstDoesNotSuppressIt() async throws {
            // b's operation is the latest, so it is started first; a's, with the same token, stays eligible.
            let fromA = Self.operation("same", backend: Self.a, created: 1)
            let fromB = Self.operation("same", backend: Self.b, created: 2)
            let fetcher = ScriptedFetcher(operations: OperationOrdering.merged([[fromA], [fromB]]))
            let redeemer = ImmediateRedeemer()
            let clock = ManualWallClock(millis: 1_750_000_000_000)
            let coordinator = FetchCoordinator(fetcher: fetcher, pipeline: RedemptionPipeline(redeemer: redeemer),
                                               policy: .pushOnly, clock: clock)
            let first = try #require(await coordinator.handle(.foreground).snapshot)
            #expect(first.operations.count == 2, "merging keeps both")
            #expect(first.started == .redeemed(identity: fromB.identity, operation: Practices.answer))
            clock.advance(byMillis: FetchCoordinator.defaultThrottleWindowMillis)
            let second = try #require(await coordinator.handle(.userAction).snapshot)
            #expect(second.eligible == [fromA])
            #expect(second.started == .redeemed(identity: fromA.identity, operation: Practices.answer))
            #expect(redeemer.calls("same") == 2)
        }
    }
}

import DeviceSigning
import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannel

extension Practices {
    /// An operation is its token at its redeem URL's origin: one backend cannot suppress another's
    /// operation, and an operation that arrives by push, link or QR code redeems only on a
    /// registered backend. On threads of their own: one test does the blocking socket I/O of two
    /// reference backends.
    @Suite(.dedicatedThread) struct RedemptionIdentityTests {
        static func operation(_ token: String, backend: String, created: Int64) -> PendingOutOfBandOperation {
            PendingOutOfBandOperation(
                creationTimeInEpochMillis: created, dispatchChannel: .pushNotification,
                payload: .init(
                    contentType: "application/json", version: "1",
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

        /// Tokens are compared as bytes: two that Swift's string comparison takes for one
        /// (canonically equivalent) are two operations, both kept and both redeemed.
        @Test func canonicallyEquivalentTokensAreTwoOperations() async {
            let composed = Self.operation("tok-\u{E9}", backend: Self.a, created: 1)
            let decomposed = Self.operation("tok-e\u{301}", backend: Self.a, created: 2)
            #expect(composed.token == decomposed.token, "Swift's strings call them equal")
            #expect(composed.identity != decomposed.identity)
            #expect(Set([composed.identity, decomposed.identity]).count == 2)
            #expect(OperationOrdering.merged([[composed, decomposed]]).count == 2)
            // Of one time and one server, their order is the bytes', whatever the input's.
            let first = Self.operation("tok-\u{E9}", backend: Self.a, created: 5)
            let second = Self.operation("tok-e\u{301}", backend: Self.a, created: 5)
            #expect(
                OperationOrdering.merged([[first], [second]]).map { Array($0.token.utf8) }
                    == OperationOrdering.merged([[second], [first]]).map { Array($0.token.utf8) })
            let pipeline = RedemptionPipeline(redeemer: ImmediateRedeemer())
            #expect(await pipeline.redeem(composed).code == "redeemed")
            #expect(await pipeline.redeem(decomposed).code == "redeemed", "not a duplicate of the first")
        }

        /// One token at two origins, of one time and one server (a caller's own lists): their
        /// order is the redeem URLs', whatever the input's, and both are kept.
        @Test func theSameTokenAtTwoOriginsIsOrderedByItsRedeemURL() {
            func at(_ origin: String) -> PendingOutOfBandOperation {
                PendingOutOfBandOperation(
                    creationTimeInEpochMillis: 5, dispatchChannel: .pushNotification,
                    payload: .init(
                        contentType: "application/json", version: "1",
                        redeemData: .init(token: "same", redeemUrl: origin + "/nevisfido/token/redeem")),
                    server: Self.a)
            }
            let (first, second) = (at(Self.a), at(Self.b))
            #expect(OperationOrdering.merged([[second], [first]]) == [first, second])
            #expect(OperationOrdering.merged([[first, second]]) == [first, second])
            #expect(OperationOrdering.merged([[second, first]]) == [first, second])
        }

        @Test func aBackendThatSendsAnotherBackendsTokenFirstDoesNotSuppressIt() async throws {
            // b's operation is the latest, so it is started first; a's, with the same token, stays eligible.
            let fromA = Self.operation("same", backend: Self.a, created: 1)
            let fromB = Self.operation("same", backend: Self.b, created: 2)
            let fetcher = ScriptedFetcher(operations: OperationOrdering.merged([[fromA], [fromB]]))
            let redeemer = ImmediateRedeemer()
            let clock = ManualWallClock(millis: 1_750_000_000_000)
            let coordinator = FetchCoordinator(
                fetcher: fetcher, pipeline: RedemptionPipeline(redeemer: redeemer),
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

        @Test func anIncomingOperationForAnUnregisteredOriginIsRefusedAndNothingIsSent() async throws {
            let transport = FakeTransport { _ in
                .answer(HTTPAnswer(status: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8)))
            }
            let client = RedemptionClient(
                requestTimeout: .seconds(15), transport: transport, timer: NeverTimer(),
                registeredBackends: [URL(string: Self.a)!])
            let coordinator = FetchCoordinator(
                fetcher: ScriptedFetcher(),
                pipeline: RedemptionPipeline(redeemer: client),
                policy: .accessibility, clock: ManualWallClock(millis: 0))
            for channel in [DispatchChannel.pushNotification, .qrCode, .link] {
                let foreign = Self.operation("t-\(channel)", backend: "https://evil.example", created: 1)
                let report = try #require(await coordinator.handle(.incoming(channel, foreign.payload)).incomingReport)
                guard case .released(let identity, .networkError(_, let cause)) = report else {
                    Issue.record("expected released with a networkError, got \(report)")
                    continue
                }
                #expect(identity == foreign.identity && cause.kind == .foreignRedeemUrl)
                #expect(await coordinator.pipeline.state(of: identity) == .unseen)
            }
            #expect(transport.requests.isEmpty)
            let own = Self.operation("t-own", backend: Self.a, created: 1)
            let accepted = await coordinator.handle(.incoming(.pushNotification, own.payload)).incomingReport
            #expect(accepted?.code == "redeemed")
            #expect(transport.requests.count == 1)
        }

        @Test func aPushFromAnotherBackendReachesNoListener() async throws {
            let device = try ReferenceDevice()
            defer { device.backend.stop() }
            let elsewhere = try ReferenceDevice(deviceId: device.deviceId)
            defer { elsewhere.backend.stop() }
            let foreign = try elsewhere.dispatch(.pushNotification)
            let own = try device.dispatch(.pushNotification)
            let client = RedemptionClient(registeredBackends: [device.registration.server])
            let coordinator = device.coordinator(redeemer: client)
            let refused = await coordinator.handle(.incoming(.pushNotification, foreign)).incomingReport
            guard case .released(_, .networkError(_, let cause))? = refused else {
                Issue.record("expected released with a networkError, got \(String(describing: refused))")
                return
            }
            #expect(cause.kind == .foreignRedeemUrl)
            #expect(await coordinator.handle(.incoming(.pushNotification, own)).incomingReport?.code == "redeemed")
            #expect(elsewhere.backend.statistics.requests(to: .redeem) == 0, "the other listener received nothing")
            #expect(device.backend.statistics.redemptions[own.redeemData.token] == 1)
        }
    }
}

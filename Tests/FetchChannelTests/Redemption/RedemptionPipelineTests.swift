import DeviceSigning
import Foundation
import Testing

@testable import FetchChannel

extension Practices {
    @Suite struct RedemptionPipelineTests {
        @Test func successRedeemsOnceAndLaterDeliveriesAreDuplicates() async {
            let redeemer = ImmediateRedeemer()
            let pipeline = RedemptionPipeline(redeemer: redeemer)
            #expect(
                await pipeline.redeem(Practices.payload("t1"))
                    == .redeemed(identity: .onBackend("t1"), operation: Practices.answer))
            #expect(
                await pipeline.redeem(Practices.payload("t1"))
                    == .duplicate(identity: .onBackend("t1"), state: .redeemed))
            #expect(
                await pipeline.redeem(Practices.operation("t1", created: 1))
                    == .duplicate(identity: .onBackend("t1"), state: .redeemed))
            #expect(redeemer.calls("t1") == 1)
            #expect(await pipeline.state(of: .onBackend("t1")) == .redeemed)
            #expect(await pipeline.inProgressTokens.isEmpty)
        }

        @Test func aTokenIsInProgressBeforeTheRequestSoAConcurrentDeliveryIsADuplicate() async {
            let redeemer = GatedRedeemer()
            let pipeline = RedemptionPipeline(redeemer: redeemer)
            let first = Task { await pipeline.redeem(Practices.payload("t1")) }
            await redeemer.waitForWaiting(1)
            #expect(await pipeline.state(of: .onBackend("t1")) == .inProgress)
            #expect(
                await pipeline.redeem(Practices.payload("t1"))
                    == .duplicate(identity: .onBackend("t1"), state: .inProgress))
            #expect(redeemer.resolve("t1", succeed: true))
            #expect(await first.value == .redeemed(identity: .onBackend("t1"), operation: Practices.answer))
            #expect(redeemer.calls("t1") == 1)
            #expect(redeemer.violations.isEmpty)
        }

        @Test func otherTokensAreNotHeldUpByARequestUnderWay() async {
            let redeemer = GatedRedeemer()
            let pipeline = RedemptionPipeline(redeemer: redeemer)
            let slow = Task { await pipeline.redeem(Practices.payload("slow")) }
            await redeemer.waitForWaiting(1)
            let fast = Task { await pipeline.redeem(Practices.payload("fast")) }
            await redeemer.waitForWaiting(2)
            redeemer.resolve("fast", succeed: true)
            #expect(await fast.value.code == "redeemed")
            #expect(await pipeline.state(of: .onBackend("slow")) == .inProgress)
            redeemer.resolve("slow", succeed: true)
            #expect(await slow.value.code == "redeemed")
        }

        @Test(arguments: [Practices.networkFailure, Practices.serverFailure, Practices.cancelled])
        func aFailureReleasesTheTokenForARetry(failure: RedemptionError) async {
            let redeemer = ImmediateRedeemer { _, attempt in
                attempt == 1 ? .failure(failure) : .success(Practices.answer)
            }
            let pipeline = RedemptionPipeline(redeemer: redeemer)
            #expect(
                await pipeline.redeem(Practices.payload("t1"))
                    == .released(identity: .onBackend("t1"), error: failure))
            #expect(await pipeline.state(of: .onBackend("t1")) == .unseen)
            #expect(await pipeline.redeemedCount == 0)
            #expect(
                await pipeline.redeem(Practices.payload("t1"))
                    == .redeemed(identity: .onBackend("t1"), operation: Practices.answer))
            #expect(redeemer.calls("t1") == 2)
        }

        @Test func tokenAlreadyRedeemedMovesTheTokenToTheRedeemedSet() async {
            let redeemer = ImmediateRedeemer { _, _ in .failure(Practices.alreadyRedeemed) }
            let pipeline = RedemptionPipeline(redeemer: redeemer)
            #expect(await pipeline.redeem(Practices.payload("t1")) == .alreadyRedeemed(identity: .onBackend("t1")))
            #expect(await pipeline.state(of: .onBackend("t1")) == .redeemed)
            #expect(
                await pipeline.redeem(Practices.payload("t1"))
                    == .duplicate(identity: .onBackend("t1"), state: .redeemed))
            #expect(redeemer.calls("t1") == 1)
        }

        @Test func tokenExpiredIsDroppedAndReported() async {
            let redeemer = ImmediateRedeemer { _, _ in .failure(Practices.expired) }
            let pipeline = RedemptionPipeline(redeemer: redeemer)
            let report = await pipeline.redeem(Practices.payload("t1"))
            #expect(report == .expired(identity: .onBackend("t1"), error: Practices.expired))
            #expect(!report.movedToRedeemed)
            #expect(await pipeline.state(of: .onBackend("t1")) == .unseen)
            #expect(await pipeline.redeemedCount == 0)
            #expect(await pipeline.inProgressTokens.isEmpty)
            // The backend's last word: a later delivery is reported so again, without a request.
            #expect(await pipeline.redeem(Practices.payload("t1")) == report)
            #expect(redeemer.calls("t1") == 1)
            #expect(await pipeline.expired(among: [.onBackend("t1"), .onBackend("t2")]) == [.onBackend("t1")])
        }

        /// The backend redeems a token once: a request under way when its caller is cancelled
        /// still ends with its answer, which the caller gets, instead of a cancelled request whose
        /// answer (the UAF request) is lost and whose retry hears only "already redeemed".
        @Test func aCallerCancelledWhileItsRequestRunsStillGetsTheAnswer() async {
            let redeemer = GatedRedeemer()
            let pipeline = RedemptionPipeline(redeemer: redeemer)
            let caller = Task { await pipeline.redeem(Practices.payload("t1")) }
            await redeemer.waitForWaiting(1)
            caller.cancel()
            #expect(redeemer.resolve("t1", succeed: true), "the request was cancelled with its caller")
            #expect(await caller.value == .redeemed(identity: .onBackend("t1"), operation: Practices.answer))
            #expect(await pipeline.inProgressTokens.isEmpty)
            #expect(await pipeline.state(of: .onBackend("t1")) == .redeemed)
        }

        /// A caller cancelled before it asks: the redeemer is asked in the cancelled task, so the
        /// real client refuses before sending, and the token is released.
        @Test func aCallerCancelledBeforeItAsksSendsNothing() async {
            let redeemer = CancellationRecordingRedeemer()
            let pipeline = RedemptionPipeline(redeemer: redeemer)
            let caller = Task { () -> RedemptionReport in
                withUnsafeCurrentTask { $0?.cancel() }
                return await pipeline.redeem(Practices.payload("t1"))
            }
            #expect(await caller.value.code == "released")
            #expect(redeemer.sawCancelled == [true])
            #expect(await pipeline.state(of: .onBackend("t1")) == .unseen)
        }

        @Test func theRedeemedSetForgetsItsOldestBeyondTheCapacity() async {
            let redeemer = ImmediateRedeemer()
            let pipeline = RedemptionPipeline(redeemer: redeemer, capacity: 3)
            for index in 1...5 { _ = await pipeline.redeem(Practices.payload("t\(index)")) }
            #expect(await pipeline.redeemedTokens == ["t3", "t4", "t5"])
            #expect(await pipeline.redeemedCount == 3)
            #expect(await pipeline.state(of: .onBackend("t2")) == .unseen)
            #expect(await pipeline.state(of: .onBackend("t3")) == .redeemed)
        }

        @Test func theLedgerForgetsTheOldestInOrderAcrossManyWraps() {
            var ledger = RedemptionLedger<String>(capacity: 7)
            for index in 0..<100 {
                #expect(ledger.begin("t\(index)") == .unseen)
                _ = ledger.finish("t\(index)", with: .success(Practices.answer))
                #expect(ledger.begin("t\(index)") == .redeemed)  // a member keeps its place
            }
            #expect(ledger.redeemedCount == 7)
            #expect(ledger.redeemedOldestFirst == (93..<100).map { "t\($0)" })
            #expect(ledger.state(of: "t92") == .unseen && ledger.state(of: "t93") == .redeemed)
            // A forgotten token can be begun again; an eviction never touches one in progress.
            #expect(ledger.begin("t0") == .unseen)
            #expect(ledger.begin("busy") == .unseen)
            for index in 100..<120 {
                _ = ledger.begin("t\(index)")
                _ = ledger.finish("t\(index)", with: .success(Practices.answer))
            }
            #expect(ledger.inProgress == ["t0", "busy"])
        }

        @Test func aLoadedListKeepsItsNewestTokensAndIgnoresRepeats() {
            let ledger = RedemptionLedger<String>(capacity: 3, redeemedOldestFirst: ["a", "b", "a", "c", "d"])
            #expect(ledger.redeemedOldestFirst == ["b", "c", "d"])
            #expect(ledger.state(of: "a") == .unseen)
        }

        @Test func ledgerRefusesADuplicateBeginAndEndsEveryBegunToken() {
            var ledger = RedemptionLedger<String>(capacity: 10)
            #expect(ledger.begin("a") == .unseen)
            #expect(ledger.begin("a") == .inProgress)
            #expect(ledger.finish("a", with: .failure(Practices.expired)) == .unseen)
            #expect(ledger.begin("a") == .unseen)
            #expect(ledger.finish("a", with: .success(Practices.answer)) == .redeemed)
            #expect(ledger.begin("a") == .redeemed)
            #expect(ledger.inProgress.isEmpty)
        }
    }
}

/// Answers every call as cancelled, and records whether the calling task was cancelled.
final class CancellationRecordingRedeemer: OperationRedeeming {
    private let seen = Locked<[Bool]>([])

    var sawCancelled: [Bool] { seen.withLock { $0 } }

    func redeem(_ payload: PendingOutOfBandOperation.Payload) async -> RedemptionResult {
        seen.withLock { $0.append(Task.isCancelled) }
        return .failure(Practices.cancelled)
    }
}

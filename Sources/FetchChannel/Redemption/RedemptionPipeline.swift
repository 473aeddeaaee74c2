import Synchronization

/// The single serialized path by which this device redeems operations: each operation is
/// redeemed at most once, however many pushes, links, QR codes and fetches deliver it, and however
/// they interleave.
///
/// An operation is its ``RedemptionIdentity``: the redeem token at the origin of its redeem URL.
/// The same token from two backends is two operations, so one backend cannot make this device
/// skip another's operation by sending its token first.
///
/// Rules, in order (all bookkeeping happens on the actor, between the awaits):
/// - an identity that is redeemed or in progress is skipped and reported as
///   ``RedemptionReport/duplicate(identity:state:)``;
/// - otherwise it is marked in progress *before* the request, so a concurrent delivery of the same
///   operation is a duplicate;
/// - success -> redeemed; `tokenAlreadyRedeemed` -> redeemed (and reported so); `tokenExpired`
///   -> dropped and reported, and remembered (the newest ``expiredCapacity``): a later delivery of
///   it is reported expired again without a request, and a fetch does not choose it; any other failure (network — a redeem URL outside the registered
///   backends included —, 5xx, unknown) -> released, so the person can try again. An identity
///   never stays in progress after its request returned.
/// - a request, once begun, runs to its end (its timeout bounds it) even when the caller is
///   cancelled, and the caller gets its report: the backend redeems a token once, so an answer
///   thrown away (the UAF request to carry on with) could not be asked for again; the next
///   delivery would only hear `tokenAlreadyRedeemed`. A caller cancelled before it asks sends
///   nothing: released, `networkError` (`cancelled`).
///
/// Requests for *different* identities may be under way at the same time; only the bookkeeping is
/// serialized. The redeemed set is bounded (``capacity``, default 10,000; the oldest is forgotten
/// first — the backend still refuses a forgotten token as already redeemed) and can persist to a
/// ``RedeemedTokenFile``.
public actor RedemptionPipeline {
    /// The redeemed set's default capacity.
    public static let defaultCapacity = 10_000

    /// How many redeemed identities are remembered.
    public nonisolated let capacity: Int
    private let redeemer: any OperationRedeeming
    private var ledger: RedemptionLedger<RedemptionIdentity>
    private let storage: RedeemedTokenStorage?
    /// The last failure to write the redeemed-token file (nil when the last write worked or
    /// nothing persists). The set in memory stays right; only a restart could forget tokens.
    public private(set) var persistenceFailure: RedeemedTokenFileError?
    /// Set when a write found the redeemed-token file corrupt: it was kept under another name
    /// (the reason says which: `.corrupt-` and a time appended) and replaced by this pipeline's
    /// redeemed set.
    /// Whatever only the damaged file held (other processes' tokens) is in that copy alone.
    public private(set) var corruptFileReplaced: RedeemedTokenFileError?
    /// Identities redeemed and not yet handed to a write of the file (at most ``capacity``).
    private var unsaved: [RedemptionIdentity] = []
    /// The write of the file under way, if any: its identities, and the task that ends once its
    /// outcome is recorded here. Writes are numbered as they start; one at a time.
    private var write: (identities: [RedemptionIdentity], done: Task<Void, Never>)?
    private var writesStarted = 0
    private var writesFinished = 0
    /// How many expired identities are remembered.
    public static let expiredCapacity = 1_000
    /// The identities the backend called expired, with its answer; `expiredOrder` oldest first.
    private var expired: [RedemptionIdentity: RedemptionError] = [:]
    private var expiredOrder: [RedemptionIdentity] = []

    /// A pipeline that keeps its redeemed set in memory only.
    public init(redeemer: any OperationRedeeming, capacity: Int = RedemptionPipeline.defaultCapacity) {
        precondition(capacity >= 1, "RedemptionPipeline needs a capacity of at least 1")
        self.capacity = capacity
        self.redeemer = redeemer
        ledger = RedemptionLedger(capacity: capacity)
        storage = nil
    }

    /// A pipeline whose redeemed set starts from `file` (the newest `capacity` identities in it)
    /// and is written back after every change. Throws when the file or its directory cannot be used.
    /// A version 1 file (tokens without their origin) is read as an empty set: see ``RedeemedTokenFile``.
    public init(
        redeemer: any OperationRedeeming, capacity: Int = RedemptionPipeline.defaultCapacity,
        persistingTo file: RedeemedTokenFile
    ) throws(RedeemedTokenFileError) {
        precondition(capacity >= 1, "RedemptionPipeline needs a capacity of at least 1")
        let storage = try RedeemedTokenStorage(file)
        let identities = try storage.load()
        self.capacity = capacity
        self.redeemer = redeemer
        ledger = RedemptionLedger(capacity: capacity, redeemedOldestFirst: identities)
        self.storage = storage
    }

    /// Redeems the operation `payload` describes, unless its identity is redeemed or in progress.
    public func redeem(_ payload: PendingOutOfBandOperation.Payload) async -> RedemptionReport {
        let identity = payload.redeemData.identity
        if let report = begin(identity) { return report }
        return await settle(payload, identity: identity)
    }

    /// Redeems a fetched operation: the pipeline redeems its payload.
    public func redeem(_ operation: PendingOutOfBandOperation) async -> RedemptionReport {
        await redeem(operation.payload)
    }

    /// How many redemptions this pipeline has begun and how many of them have ended, whoever
    /// asked. Read without waiting for the actor, so that a coordinator reads it in the very step
    /// in which it decides to fetch, and passes it to ``redeemIfIdle(_:unlessActiveSince:)``.
    public struct Activity: Sendable, Hashable {
        /// Redemptions begun (requests started).
        public let begun: Int
        /// Redemptions whose request has returned and whose outcome is recorded (and written to
        /// the redeemed-token file, when there is one).
        public let settled: Int
        /// Whether no redemption was under way when this was read.
        public var isIdle: Bool { begun == settled }
    }

    /// What the pipeline has begun and settled so far. The settled count is read first: a
    /// redemption under way at any moment of the read shows as one begun and not settled.
    public nonisolated var activity: Activity {
        let settled = settledCount.load(ordering: .acquiring)
        return Activity(begun: begunCount.load(ordering: .acquiring), settled: settled)
    }
    private nonisolated let begunCount = Atomic<Int>(0)
    private nonisolated let settledCount = Atomic<Int>(0)

    /// Redeems `operation` only when no redemption at all is under way, and, given an
    /// ``activity`` read earlier, none was under way then and none has begun or ended since; nil
    /// (nothing done) otherwise. A fetch starts its chosen operation this way, so that it never
    /// competes with an operation a push, link or QR code (or the app) is already starting, nor
    /// follows one that was under way or began while the fetch ran (the person is in that
    /// operation's flow, finished or not). Decided and begun in one step on the actor.
    public func redeemIfIdle(
        _ operation: PendingOutOfBandOperation, unlessActiveSince earlier: Activity? = nil
    ) async -> RedemptionReport? {
        guard ledger.inProgressCount == 0, activity.isIdle, earlier.map({ $0.isIdle && $0 == activity }) ?? true
        else {
            return nil
        }
        if let report = begin(operation.identity) { return report }
        return await settle(operation.payload, identity: operation.identity)
    }

    /// Marks `identity` in progress and returns nil, or returns why it is not redeemed now
    /// (remembered as expired, or redeemed or in progress already). Synchronous, so the check and
    /// the mark happen in one step on the actor.
    private func begin(_ identity: RedemptionIdentity) -> RedemptionReport? {
        if let error = expired[identity] { return .expired(identity: identity, error: error) }
        let previous = ledger.begin(identity)
        guard previous == .unseen else { return .duplicate(identity: identity, state: previous) }
        begunCount.add(1, ordering: .releasing)
        return nil
    }

    /// Sends the request for `identity`, which ``RedemptionLedger/begin(_:)`` has just marked in
    /// progress, and records its outcome.
    private func settle(_ payload: PendingOutOfBandOperation.Payload, identity: RedemptionIdentity) async
        -> RedemptionReport
    {
        // In progress now: any delivery of `identity` that reaches the actor during this await is a duplicate.
        let outcome: Result<RedeemedOperation, RedemptionError>
        if Task.isCancelled {
            // The redeemer sees the cancellation and refuses before sending anything.
            outcome = await redeemer.redeem(payload)
        } else {
            // A task of its own, which the caller's cancellation does not reach.
            let redeemer = redeemer
            outcome = await Task { await redeemer.redeem(payload) }.value
        }
        let state = ledger.finish(identity, with: outcome)
        // Settled once written: until then a fetch's choice must not start beside it.
        if state == .redeemed { await persist(identity) }
        settledCount.add(1, ordering: .releasing)
        if case .failure(let error) = outcome, case .tokenExpired = error { rememberExpired(identity, error) }
        return RedemptionReport(identity, settledWith: outcome)
    }

    /// Which of `identities` the backend called expired (remembered ones).
    public func expired(among identities: [RedemptionIdentity]) -> Set<RedemptionIdentity> {
        Set(identities.filter { expired[$0] != nil })
    }

    private func rememberExpired(_ identity: RedemptionIdentity, _ error: RedemptionError) {
        guard expired.updateValue(error, forKey: identity) == nil else { return }
        expiredOrder.append(identity)
        if expiredOrder.count > Self.expiredCapacity {
            expired.removeValue(forKey: expiredOrder.removeFirst())
        }
    }

    /// Where `identity` stands.
    public func state(of identity: RedemptionIdentity) -> RedemptionState {
        ledger.state(of: identity)
    }

    /// Where each of `identities` stands, in one call.
    public func states(of identities: [RedemptionIdentity]) -> [RedemptionIdentity: RedemptionState] {
        var states: [RedemptionIdentity: RedemptionState] = [:]
        states.reserveCapacity(identities.count)
        for identity in identities { states[identity] = ledger.state(of: identity) }
        return states
    }

    /// The operations whose request is under way.
    public var inProgress: Set<RedemptionIdentity> { ledger.inProgress }

    /// The remembered redeemed operations, oldest first (at most ``capacity``).
    public var redeemed: [RedemptionIdentity] { ledger.redeemedOldestFirst }

    /// The tokens of ``inProgress`` (the same token may be under way at two origins).
    public var inProgressTokens: Set<String> { Set(ledger.inProgress.map(\.token)) }

    /// The tokens of ``redeemed``, oldest first.
    public var redeemedTokens: [String] { ledger.redeemedOldestFirst.map(\.token) }

    /// How many redeemed identities are remembered.
    public var redeemedCount: Int { ledger.redeemedCount }

    /// Writes `identity` to the file before its redemption is reported. The write runs on a
    /// thread of its own (``BlockingWork``): it may wait up to 30 s for another process's lock
    /// and syncs twice, and the actor, its other callers and the task pool go on meanwhile
    /// (docs/ARCHITECTURE.md, "Threads"). One write at a time, each carrying everything unsaved
    /// as it starts: a caller waits for the write under way, if any, and then for the next one,
    /// which carries its identity, and no longer. A failed write leaves its identities for the
    /// next change to write, as ``persistenceFailure`` says.
    private func persist(_ identity: RedemptionIdentity) async {
        guard let storage else { return }
        unsaved.append(identity)
        if unsaved.count > capacity { unsaved.removeFirst(unsaved.count - capacity) }
        let carrier = writesStarted + 1
        while writesFinished < carrier {
            if let write {
                await write.done.value
            } else {
                startWrite(to: storage)
            }
        }
    }

    private func startWrite(to storage: RedeemedTokenStorage) {
        let identities = unsaved
        unsaved.removeAll()
        // The whole set is made only for a corrupt file, which it replaces; the ledger's copy
        // shares its storage until either changes.
        let ledger = ledger
        let capacity = capacity
        writesStarted += 1
        let done = Task {
            let outcome = await BlockingWork.run {
                Result { () throws(RedeemedTokenFileError) -> RedeemedTokenFileError? in
                    try storage.save(
                        identities, replacingACorruptFileWith: { ledger.redeemedOldestFirst }, capacity: capacity)
                }
            }
            self.record(outcome)
        }
        write = (identities, done)
    }

    /// The outcome of the write under way. Identities a failed write held are written with the
    /// next change, ahead of those redeemed since, as many as the capacity keeps.
    private func record(_ outcome: Result<RedeemedTokenFileError?, RedeemedTokenFileError>) {
        switch outcome {
        case .success(let replaced):
            if let replaced { corruptFileReplaced = replaced }
            persistenceFailure = nil
        case .failure(let error):
            unsaved = (write?.identities ?? []) + unsaved
            if unsaved.count > capacity { unsaved.removeFirst(unsaved.count - capacity) }
            persistenceFailure = error
        }
        write = nil
        writesFinished += 1
    }
}

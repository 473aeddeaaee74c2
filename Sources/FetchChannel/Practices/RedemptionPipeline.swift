/// The single serialized path by which this device redeems operations: each redeem token (the
/// operation's identity) is redeemed at most once, however many pushes, links, QR codes and
/// fetches deliver it, and however they interleave.
///
/// Rules, in order (all bookkeeping happens on the actor, between the awaits):
/// - a token that is redeemed or in progress is skipped and reported as ``RedemptionReport/duplicate(token:state:)``;
/// - otherwise it is marked in progress *before* the request, so a concurrent delivery of the same
///   token is a duplicate;
/// - success -> redeemed; `tokenAlreadyRedeemed` -> redeemed (and reported so); `tokenExpired`
///   -> dropped and reported; any other failure (network, 5xx, unknown) -> released, so the
///   person can try again. A token never stays in progress after its request returned.
///
/// Requests for *different* tokens may be under way at the same time; only the bookkeeping is
/// serialized. The redeemed set is bounded (``capacity``, default 10,000; the oldest is forgotten
/// first — the backend still refuses a forgotten token as already redeemed) and can persist to a
/// ``RedeemedTokenFile``.
public actor RedemptionPipeline {
    /// The redeemed set's default capacity.
    public static let defaultCapacity = 10_000

    /// How many redeemed tokens are remembered.
    public nonisolated let capacity: Int
    private let redeemer: any OperationRedeeming
    private var ledger: RedemptionLedger
    private let storage: RedeemedTokenStorage?
    /// The last failure to write the redeemed-token file (nil when the last write worked or
    /// nothing persists). The set in memory stays right; only a restart could forget tokens.
    public private(set) var persistenceFailure: RedeemedTokenFileError?

    /// A pipeline that keeps its redeemed set in memory only.
    public init(redeemer: any OperationRedeeming, capacity: Int = RedemptionPipeline.defaultCapacity) {
        precondition(capacity >= 1, "RedemptionPipeline needs a capacity of at least 1")
        self.capacity = capacity
        self.redeemer = redeemer
        ledger = RedemptionLedger(capacity: capacity)
        storage = nil
    }

    /// A pipeline whose redeemed set starts from `file` (the newest `capacity` tokens in it) and
    /// is written back after every change. Throws when the file or its directory cannot be used.
    public init(redeemer: any OperationRedeeming, capacity: Int = RedemptionPipeline.defaultCapacity,
                persistingTo file: RedeemedTokenFile) throws(RedeemedTokenFileError) {
        precondition(capacity >= 1, "RedemptionPipeline needs a capacity of at least 1")
        let storage = try RedeemedTokenStorage(file)
        let tokens = try storage.load()
        self.capacity = capacity
        self.redeemer = redeemer
        ledger = RedemptionLedger(capacity: capacity, redeemedOldestFirst: tokens)
        self.storage = storage
    }

    /// Redeems the operation `payload` describes, unless its token is redeemed or in progress.
    public func redeem(_ payload: PendingOutOfBandOperation.Payload) async -> RedemptionReport {
        let token = payload.redeemData.token
        let previous = ledger.begin(token)
        guard previous == .unseen else { return .duplicate(token: token, state: previous) }
        // In progress now: any delivery of `token` that reaches the actor during this await is a duplicate.
        let outcome = await redeemer.redeem(payload)
        let report = ledger.finish(token, with: outcome)
        if report.movedToRedeemed { persist() }
        return report
    }

    /// Redeems a fetched operation: the pipeline redeems its payload.
    public func redeem(_ operation: PendingOutOfBandOperation) async -> RedemptionReport {
        await redeem(operation.payload)
    }

    /// Where `token` stands.
    public func state(of token: String) -> RedemptionState {
        ledger.state(of: token)
    }

    /// Where each of `tokens` stands, in one call.
    public func states(of tokens: [String]) -> [String: RedemptionState] {
        var states: [String: RedemptionState] = [:]
        states.reserveCapacity(tokens.count)
        for token in tokens { states[token] = ledger.state(of: token) }
        return states
    }

    /// The tokens whose request is under way.
    public var inProgressTokens: Set<String> { ledger.inProgress }

    /// The remembered redeemed tokens, oldest first (at most ``capacity``).
    public var redeemedTokens: [String] { ledger.redeemedOldestFirst }

    /// How many redeemed tokens are remembered.
    public var redeemedCount: Int { ledger.redeemedCount }

    private func persist() {
        guard let storage else { return }
        do {
            try storage.save(ledger.redeemedOldestFirst)
            persistenceFailure = nil
        } catch {
            persistenceFailure = error
        }
    }
}

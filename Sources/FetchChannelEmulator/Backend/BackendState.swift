import DeviceSigning
import Foundation

/// Everything the emulated backend remembers, behind one lock: dispatch targets, operations,
/// redemptions, faults and counters. Every method is one critical section, so a redemption is
/// atomic: two concurrent redeems of one token give exactly one success.
final class BackendState: Sendable {
    enum RedeemOutcome: Equatable {
        case redeemed(lifetimeMillis: Int64, kind: OperationKind)
        case alreadyRedeemed
        case expired
        case unknownToken
        case wrongKind
    }

    /// Who asks for a dispatch target: the emulator's own control (always admitted), or a device
    /// request that carried a verified signature of the named dispatch target (nil: unsigned).
    enum Registrant: Equatable {
        case control
        case device(signedBy: String?)
    }

    /// Whether an operation was stored, or why not.
    enum AddOutcome: Equatable {
        case added
        /// The store holds its most operations (``maximumOperations``), none old enough to drop.
        case full
        /// The device has its most pending operations (``ReferenceBackend/Configuration/pendingOperationsPerDevice``).
        case deviceFull
        /// With the operation, the device's operations answer would be larger than the client reads
        /// (``OperationsAnswerSize/maximumJSONBytes``).
        case deviceAnswerFull
    }

    enum RegistrationOutcome: Equatable {
        case registered
        /// The device has a dispatch target, and the request was not signed by one of them.
        case notSignedByTheDevice
        case full
    }

    private struct Storage {
        var targets: [String: DispatchTargetRecord] = [:]
        var targetIdsByDevice: [String: Set<String>] = [:]
        var operationsByToken: [String: StoredOperation] = [:]
        var devices: [String: DeviceOperations] = [:]
        var faults: [EmulatorFault] = []
        /// Answers to hold, the next request of their endpoint each (``AnswerHold``).
        var holds: [AnswerHold] = []
        var statistics = EmulatorStatistics()
        /// No stored operation expires before it (it may be earlier than any: an operation that
        /// a fetch dropped leaves it), so no purge can drop anything before it is an hour past.
        var earliestExpiry: Int64 = .max
        /// How often ``purge(_:nowMillis:)`` went through the operations (for tests).
        var purgeScans = 0
    }

    /// Bounds that keep a long-running emulator's memory flat.
    static let maximumTargets = 100_000
    static let maximumOperations = 200_000
    /// Injected faults kept at most: each request scans them, and a script that adds faults in a
    /// loop without clearing them must not grow the list without end.
    static let maximumFaults = 1_000

    private let storage = Locked(Storage())
    /// The operations kept at most (``maximumOperations``; a test makes it small).
    private let operationCapacity: Int
    /// The pending operations one device may have at most, so that one device cannot take the
    /// whole store from the others.
    private let pendingCapacityPerDevice: Int

    /// The dispatch targets kept at most (``maximumTargets``; a test makes it small). Targets are
    /// never removed, so past it every registration is refused (507 `TOO_MANY_TARGETS`).
    private let targetCapacity: Int

    init(
        operationCapacity: Int = BackendState.maximumOperations, pendingCapacityPerDevice: Int = 1_000,
        targetCapacity: Int = BackendState.maximumTargets
    ) {
        self.operationCapacity = operationCapacity
        self.pendingCapacityPerDevice = pendingCapacityPerDevice
        self.targetCapacity = targetCapacity
    }

    // MARK: Dispatch targets

    /// Adds a dispatch target. The first one of a device is open to anyone (trust on first use); a
    /// further one needs a signature of one of the device's targets. Checked and added in one
    /// critical section, so two unsigned requests cannot both be a device's first.
    func register(_ record: DispatchTargetRecord, by registrant: Registrant) -> RegistrationOutcome {
        storage.withLock { storage in
            let existing = storage.targetIdsByDevice[record.deviceId] ?? []
            if case .device(let signer) = registrant, !existing.isEmpty {
                guard let signer, existing.contains(signer) else { return .notSignedByTheDevice }
            }
            guard storage.targets.count < targetCapacity else { return .full }
            storage.targets[record.id] = record
            storage.targetIdsByDevice[record.deviceId, default: []].insert(record.id)
            return .registered
        }
    }

    /// The ids of the device's dispatch targets.
    func targetIds(ofDevice deviceId: String) -> Set<String> {
        storage.withLock { $0.targetIdsByDevice[deviceId] ?? [] }
    }

    func target(_ id: String) -> DispatchTargetRecord? {
        storage.withLock { $0.targets[id] }
    }

    /// What a rotation of a dispatch target's keys came to.
    enum KeyUpdateOutcome: Equatable {
        case updated
        case unknownTarget
        /// The request named an encryption key other than the one the target holds.
        case encryptionKeyChanged
        /// The signature key is no longer the one the request was checked with: another rotation
        /// came first.
        case signatureKeyChanged
        /// The new signature key is the target's encryption key.
        case sameAsEncryptionKey
    }

    /// A rotation: the new signature key, and the encryption key named with it (nil: none named).
    /// The encryption key is kept as registered; a target registered without one takes the one
    /// named, which is how a key made before encryption keys existed gains one at its rotation.
    /// Applied only while the target's signature key is still `checkedKey`, the one the request's
    /// signature was checked with. Checked and changed in one critical section, so two rotations
    /// cannot both add an encryption key, nor both replace one signature key.
    func updateKeys(
        of id: String, replacing checkedKey: P256.Signing.PublicKey?, signatureKey: P256.Signing.PublicKey,
        encryptionKey: P256.KeyAgreement.PublicKey?
    ) -> KeyUpdateOutcome {
        storage.withLock { storage in
            guard var record = storage.targets[id] else { return .unknownTarget }
            guard record.signatureKey.x963Representation == checkedKey?.x963Representation else {
                return .signatureKeyChanged
            }
            if let held = record.encryptionKey ?? encryptionKey,
                held.x963Representation == signatureKey.x963Representation
            {
                return .sameAsEncryptionKey
            }
            if let encryptionKey {
                if let held = record.encryptionKey {
                    guard held.x963Representation == encryptionKey.x963Representation else {
                        return .encryptionKeyChanged
                    }
                } else {
                    record.encryptionKey = encryptionKey
                }
            }
            record.signatureKey = signatureKey
            storage.targets[id] = record
            return .updated
        }
    }

    // MARK: Operations

    /// Stores `operation`, unless its device has its most pending operations, or would have an
    /// operations answer larger than the client reads, or the store is full. The device's totals
    /// are kept as operations come and go (``DeviceOperations``): its list, where redeemed and
    /// expired operations stay until a purge or a fetch drops them, is gone through only when an
    /// operation counted may have expired since the last time.
    func add(_ operation: StoredOperation, nowMillis: Int64) -> AddOutcome {
        storage.withLock { storage in
            switch storage.devices[operation.deviceId]?.boundPassed(
                by: operation, capacity: pendingCapacityPerDevice, nowMillis: nowMillis, in: storage.operationsByToken)
            {
            case .count?: return .deviceFull
            case .answerSize?: return .deviceAnswerFull
            case nil: break
            }
            if storage.operationsByToken.count >= operationCapacity {
                Self.purge(&storage, nowMillis: nowMillis)
                guard storage.operationsByToken.count < operationCapacity else { return .full }
            }
            storage.operationsByToken[operation.token] = operation
            storage.earliestExpiry = min(storage.earliestExpiry, operation.expiresAtMillis)
            storage.devices[operation.deviceId, default: DeviceOperations()].add(operation)
            return .added
        }
    }

    /// Operations for the device that are neither redeemed nor expired, oldest first; of equal
    /// creation times (possible once the clock was set back), the one dispatched first.
    ///
    /// Going through the device's list, it drops what a purge would drop (operations that expired
    /// over ``purgeGraceMillis`` ago) from the store, and redeemed operations from the list (their
    /// records stay, to answer as redeemed): a fetch does not go through them again and again
    /// while the store is not full, the one time a purge runs.
    func pendingOperations(for deviceId: String, nowMillis: Int64) -> [StoredOperation] {
        storage.withLock { storage in
            let horizon = Self.purgeHorizon(nowMillis)
            var (listed, stale, redeemed) = ([StoredOperation](), [StoredOperation](), [StoredOperation]())
            for token in storage.devices[deviceId]?.tokens ?? [] {  // in dispatch order
                guard let operation = storage.operationsByToken[token] else { continue }
                if operation.expiresAtMillis < horizon {
                    stale.append(operation)
                } else if operation.redeemed {
                    redeemed.append(operation)
                } else if operation.expiresAtMillis > nowMillis {
                    listed.append(operation)
                }
            }
            if !redeemed.isEmpty { storage.devices[deviceId]?.forget(redeemed) }
            if !stale.isEmpty { Self.drop(stale, ofDevice: deviceId, from: &storage) }
            if storage.devices[deviceId]?.tokens.isEmpty == true { storage.devices[deviceId] = nil }
            return
                listed
                .enumerated()
                .sorted { ($0.element.creationTimeMillis, $0.offset) < ($1.element.creationTimeMillis, $1.offset) }
                .map(\.element)
        }
    }

    func redeem(token: String, kind: OperationKind, nowMillis: Int64) -> RedeemOutcome {
        storage.withLock { storage in
            guard let operation = storage.operationsByToken[token] else { return .unknownToken }
            guard operation.kind == kind else { return .wrongKind }
            if operation.redeemed { return .alreadyRedeemed }
            guard operation.expiresAtMillis > nowMillis else { return .expired }
            storage.devices[operation.deviceId]?.uncount(operation)
            storage.operationsByToken[token]?.redeemed = true
            storage.statistics.redemptions[token, default: 0] += 1
            return .redeemed(
                lifetimeMillis: operation.expiresAtMillis - operation.creationTimeMillis, kind: operation.kind)
        }
    }

    /// How long an operation is kept after it expired (emulator time): a redeemed operation is
    /// kept until then too, so that a second redemption of its token is still told that it was
    /// redeemed, and an expired one that it expired.
    static let purgeGraceMillis: Int64 = 3_600_000

    /// Operations that expired before it may be dropped at `nowMillis`.
    private static func purgeHorizon(_ nowMillis: Int64) -> Int64 {
        let (earlier, overflow) = nowMillis.subtractingReportingOverflow(purgeGraceMillis)
        return overflow ? Int64.min : earlier
    }

    /// Drops operations that expired more than ``purgeGraceMillis`` ago, with their redemption
    /// counts. Linear in the operations (it runs under the lock every request waits for), so it
    /// goes through them only when one of them can be dropped (``Storage/earliestExpiry``): a
    /// store full of operations that cannot be dropped yet refuses each further dispatch without
    /// going through them again. Each device's list is filtered once, and a device left without
    /// operations is forgotten.
    private static func purge(_ storage: inout Storage, nowMillis: Int64) {
        let horizon = purgeHorizon(nowMillis)
        guard storage.earliestExpiry < horizon else { return }
        storage.purgeScans += 1
        var staleByDevice: [String: [StoredOperation]] = [:]
        var earliestKept = Int64.max
        for operation in storage.operationsByToken.values {
            if operation.expiresAtMillis < horizon {
                staleByDevice[operation.deviceId, default: []].append(operation)
            } else {
                earliestKept = min(earliestKept, operation.expiresAtMillis)
            }
        }
        storage.earliestExpiry = earliestKept
        for (deviceId, stale) in staleByDevice { drop(stale, ofDevice: deviceId, from: &storage) }
    }

    /// Drops `stale`, operations of `deviceId`, from the store, with their redemption counts; the
    /// device is forgotten once it is left without operations.
    private static func drop(_ stale: [StoredOperation], ofDevice deviceId: String, from storage: inout Storage) {
        for operation in stale {
            storage.operationsByToken[operation.token] = nil
            storage.statistics.redemptions[operation.token] = nil
        }
        storage.devices[deviceId]?.forget(stale)
        if storage.devices[deviceId]?.tokens.isEmpty == true { storage.devices[deviceId] = nil }
    }

    /// How many devices the operations index holds (for tests: a purge forgets emptied ones).
    var indexedDevices: Int { storage.withLock { $0.devices.count } }

    /// How often a purge went through the stored operations (for tests).
    var purgeScans: Int { storage.withLock { $0.purgeScans } }

    /// How many operations the device's list holds, whether pending, expired or redeemed (for tests).
    func listedOperations(ofDevice deviceId: String) -> Int {
        storage.withLock { $0.devices[deviceId]?.tokens.count ?? 0 }
    }

    /// How often the device's list was gone through to count its pending operations (for tests).
    func recounts(ofDevice deviceId: String) -> Int {
        storage.withLock { $0.devices[deviceId]?.recounts ?? 0 }
    }

    // MARK: Faults and counters

    /// Adds `fault`; false when ``maximumFaults`` are kept already.
    func addFault(_ fault: EmulatorFault) -> Bool {
        storage.withLock { storage in
            guard storage.faults.count < Self.maximumFaults else { return false }
            storage.faults.append(fault)
            return true
        }
    }

    func clearFaults() {
        storage.withLock { $0.faults.removeAll() }
    }

    /// Holds the answer of the next request to `hold.endpoint`.
    func addHold(_ hold: AnswerHold) {
        storage.withLock { $0.holds.append(hold) }
    }

    /// The hold for a request to `endpoint` that arrived now, taken out; nil when none waits.
    func takeHold(for endpoint: EmulatorEndpoint) -> AnswerHold? {
        storage.withLock { storage in
            guard let index = storage.holds.firstIndex(where: { $0.endpoint == endpoint }) else { return nil }
            return storage.holds.remove(at: index)
        }
    }

    /// Counts a request to `endpoint` and returns the fault to apply to it, if any (the first
    /// matching fault; a counted fault is used up).
    func recordRequest(to endpoint: EmulatorEndpoint) -> EmulatorFault? {
        storage.withLock { storage in
            storage.statistics.requests[endpoint.rawValue, default: 0] += 1
            guard let index = storage.faults.firstIndex(where: { $0.endpoint == endpoint }) else { return nil }
            let fault = storage.faults[index]
            if let count = fault.count {
                if count <= 1 {
                    storage.faults.remove(at: index)
                } else {
                    storage.faults[index] = EmulatorFault(
                        endpoint: fault.endpoint, kind: fault.kind, seconds: fault.seconds,
                        status: fault.status, count: count - 1)
                }
            }
            return fault
        }
    }

    /// Counts a refused device request by its internal code.
    func recordRejection(code: String) {
        storage.withLock { $0.statistics.rejections[code, default: 0] += 1 }
    }

    var statistics: EmulatorStatistics {
        storage.withLock { $0.statistics }
    }
}

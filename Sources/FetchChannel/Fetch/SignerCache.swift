import DeviceSigning

/// The Device-Signature signers a client made, by registration key and dispatch target. Making a
/// signer reads its JWS header back to check it, which cost every request a few microseconds.
///
/// An entry keeps its `SigningKeySource` alive, so the identity it is found by is never reused
/// by another source; a key that failed to load is not kept, and is tried again next time. A
/// handful of entries, the oldest replaced first.
final class SignerCache: Sendable {
    private struct Entry: Sendable {
        let source: SigningKeySource
        let dispatchTargetId: String
        let signer: DeviceSignatureSigner
    }

    static let capacity = 16

    private let clock: any WallClock
    private let entries = Locked<[Entry]>([])

    init(clock: any WallClock) {
        self.clock = clock
    }

    /// The signer for `registration`'s key and dispatch target, made on first use.
    func signer(for registration: FetchRegistration) throws -> DeviceSignatureSigner {
        let source = registration.signingKey
        let dispatchTargetId = registration.dispatchTargetId
        let known = entries.withLock { entries in
            entries.first { $0.source === source && $0.dispatchTargetId.utf8.elementsEqual(dispatchTargetId.utf8) }
        }
        if let known { return known.signer }
        let signer = try DeviceSignatureSigner(key: try source.key(), dispatchTargetId: dispatchTargetId, clock: clock)
        // Released after the lock, and a TPM key's off the task pool (this may run there): the
        // last reference to a TPM key waits for its TPM to unload it.
        var evicted = entries.withLock { entries -> Entry? in
            let oldest = entries.count >= Self.capacity ? entries.removeFirst() : nil
            entries.append(Entry(source: source, dispatchTargetId: dispatchTargetId, signer: signer))
            return oldest
        }
        if evicted?.signer.isHardwareBound == true, let entry = evicted.take() {
            BlockingWork.release(consume entry)
        }
        return signer
    }
}

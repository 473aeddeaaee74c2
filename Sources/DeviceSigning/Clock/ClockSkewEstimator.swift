/// The current clock offset estimate per server: the median of its last few samples.
///
/// The median, not the mean, because one slow answer (a long queue before the server stamped
/// `Date`) or one answer from a misconfigured node behind a load balancer must not move the
/// estimate. Servers are keyed by their base URL exactly as given; callers normalise it.
///
/// Memory is bounded: at most `samplesPerServer` samples for each of at most `maximumServers`
/// servers; recording for a new server when full forgets the least recently updated one.
/// All methods are safe to call from any thread or task.
public final class ClockSkewEstimator: Sendable {
    public static let defaultSamplesPerServer = 5
    public static let defaultMaximumServers = 1_024

    /// Samples kept per server (at least 1).
    public let samplesPerServer: Int
    /// Servers kept (at least 1).
    public let maximumServers: Int

    private struct Entry {
        /// A ring of the last `samplesPerServer` offsets.
        var offsets: [Int64]
        var nextSlot: Int
        /// The estimator's `updateCount` at the last record: orders servers for eviction.
        var lastUpdate: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var updateCount: UInt64 = 0
    }

    private let state = Locked(State())

    /// Out-of-range sizes are raised to 1 rather than trapping: a cache size is not worth a crash.
    public init(
        samplesPerServer: Int = ClockSkewEstimator.defaultSamplesPerServer,
        maximumServers: Int = ClockSkewEstimator.defaultMaximumServers
    ) {
        self.samplesPerServer = max(1, samplesPerServer)
        self.maximumServers = max(1, maximumServers)
    }

    /// Adds a sample for `server`, replacing its oldest one when it already has `samplesPerServer`.
    public func record(_ sample: ClockSkewSample, for server: String) {
        let capacity = samplesPerServer
        let maximumServers = maximumServers
        state.withLock { state in
            state.updateCount &+= 1
            if var entry = state.entries[server] {
                if entry.offsets.count < capacity {
                    entry.offsets.append(sample.offsetMillis)
                } else {
                    entry.offsets[entry.nextSlot] = sample.offsetMillis
                    entry.nextSlot = (entry.nextSlot + 1) % capacity
                }
                entry.lastUpdate = state.updateCount
                state.entries[server] = entry
                return
            }
            if state.entries.count >= maximumServers,
                let stalest = state.entries.min(by: { $0.value.lastUpdate < $1.value.lastUpdate })?.key
            {
                state.entries[stalest] = nil
            }
            var offsets: [Int64] = []
            offsets.reserveCapacity(capacity)
            offsets.append(sample.offsetMillis)
            state.entries[server] = Entry(offsets: offsets, nextSlot: 0, lastUpdate: state.updateCount)
        }
    }

    /// The median of the kept samples for `server`, or nil when there are none.
    ///
    /// With an even number of samples: of the two middle ones, the one nearer zero (the lower on
    /// a tie). Not their mean: two samples that disagree, one from a node with a wrong clock
    /// behind a load balancer, would make an offset that no node has; of two that disagree, the
    /// smaller correction is taken (with four samples, two at 0 and two at +600 s, the clock is
    /// not called off).
    public func estimatedOffsetMillis(for server: String) -> Int64? {
        guard let offsets = state.withLock({ $0.entries[server]?.offsets }), !offsets.isEmpty else { return nil }
        let sorted = offsets.sorted()
        let middle = sorted.count / 2
        if sorted.count % 2 == 1 { return sorted[middle] }
        let (low, high) = (sorted[middle - 1], sorted[middle])
        return low.magnitude <= high.magnitude ? low : high
    }

    /// Forgets `server`'s samples, e.g. after the device clock was set (its old samples are now wrong).
    public func reset(server: String) {
        _ = state.withLock { $0.entries.removeValue(forKey: server) }
    }

    /// Forgets every server's samples, e.g. after the system clock changed.
    public func resetAll() {
        state.withLock { $0.entries.removeAll() }
    }

    /// How many servers currently have samples (for tests and diagnostics).
    var serverCount: Int {
        state.withLock { $0.entries.count }
    }
}

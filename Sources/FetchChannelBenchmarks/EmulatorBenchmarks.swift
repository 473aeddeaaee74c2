import DeviceSigning
import FetchChannelEmulator
import Foundation

/// The reference backend under load: signed fetches over loopback keep-alive connections from
/// concurrent clients, against the same HTTP server answering a trivial handler as the baseline.
package enum EmulatorBenchmarks {
    package struct Options: Sendable {
        package var seconds: Double
        package var clients: Int
        /// Requests for the resident-memory row; nil: ``defaultResidentRequests``.
        package var residentRequests: Int?
        /// The requests the resident-memory row spans unless told (1,000,000, as README.md's bench
        /// table gives it): a quarter to warm up, the growth measured over the rest.
        package static let defaultResidentRequests = 1_000_000

        package init(seconds: Double, clients: Int = 8, residentRequests: Int? = nil) {
            self.seconds = seconds
            self.clients = clients
            self.residentRequests = residentRequests
        }
    }

    /// The bench backend's tolerance of a signature's creation time.
    static let toleranceMillis: Int64 = 10_000

    package static func rows(_ options: Options) throws -> [BenchmarkRow] {
        let perPhase = max(0.5, options.seconds / 3)
        let baseline = try plainServerRate(clients: options.clients, seconds: perPhase)

        // A short tolerance keeps the replay cache (entries live two tolerances) at a steady size;
        // each client is one dispatch target sending thousands of requests a second, far over the
        // per-target quota a real deployment keeps. The requests are signed in chunks, each sent
        // well inside the tolerance (LoadRun.runInChunks).
        let backend = try ReferenceBackend.start(
            .init(
                toleranceMillis: toleranceMillis, replayCacheCapacity: 4_000_000,
                replayQuotaPerDispatchTarget: 4_000_000,
                http: .init(maxConnections: 64)))
        defer { backend.stop() }
        let devices = try (0..<options.clients).map { index -> (String, DeviceSignatureSigner) in
            let key = try P256.Signing.PrivateKey()
            let deviceId = "bench-device-\(index)"
            let target = try backend.registerDispatchTarget(deviceId: deviceId, signatureKey: key.publicKey)
            try backend.dispatch(deviceId: deviceId, channel: "firebase-cloud-messaging", lifetimeSeconds: 3_600)
            return (deviceId, try DeviceSignatureSigner(key: key, dispatchTargetId: target, clock: SystemWallClock()))
        }
        let port = backend.baseURL.port ?? 0
        let makeRequests = { (client: Int, count: Int) -> [[UInt8]] in
            let (deviceId, signer) = devices[client]
            return (0..<count).compactMap { _ in
                (try? signer.headerValue()).map {
                    LoopbackHTTPClient.operationsRequest(deviceId: deviceId, signature: $0)
                }
            }
        }

        let estimate = max(1_000, Int(baseline * perPhase / 4))
        let measured = try LoadRun.runInChunks(
            port: port, clients: options.clients, requests: estimate, makeRequests: makeRequests)
        let rate = Double(measured.completed) / measured.seconds
        let latencies = measured.latencies.sorted()
        let p50 = percentile(latencies, 0.50) * 1000
        let p99 = percentile(latencies, 0.99) * 1000

        let residentTotal = options.residentRequests ?? Options.defaultResidentRequests
        let warmup = residentTotal / 4
        _ = try LoadRun.runInChunks(
            port: port, clients: options.clients, requests: warmup, makeRequests: makeRequests)
        let before = Measurement.residentBytes()
        // Requests that failed (a client stops at its first) would leave the growth measured over
        // fewer requests than the row says: the row is then not met.
        let residentFailures =
            try LoadRun.runInChunks(
                port: port, clients: options.clients, requests: residentTotal - warmup, makeRequests: makeRequests
            ).failures
        let after = Measurement.residentBytes()
        let growth = Double(after - before) / 1_048_576

        return [
            BenchmarkRow(
                name: "emulator-fetches", value: rate.rounded(),
                unit: "verified fetches/s (\(options.clients) keep-alive clients; baseline: unsigned requests/s)",
                baseline: baseline.rounded(),
                ratio: Measurement.ratio(rate.rounded(), over: baseline.rounded(), rounding: .toNearestOrAwayFromZero),
                // A baseline that could not be measured (its requests failed) leaves the row not met.
                target: ">= 5000/s", met: rate.rounded() >= 5_000 && measured.failures == 0 && baseline > 0),
            BenchmarkRow(
                name: "emulator-latency-p50", value: (p50 * 100).rounded() / 100, unit: "ms", baseline: nil, ratio: nil,
                // No target, but a p50 of no requests, or of some that failed, is not measured.
                target: "-", met: !latencies.isEmpty && measured.failures == 0),
            BenchmarkRow(
                name: "emulator-latency-p99", value: (p99 * 100).rounded() / 100, unit: "ms", baseline: nil, ratio: nil,
                // Latencies of the requests that were answered: none, or some failed, is no p99.
                target: "< 20 ms", met: (p99 * 100).rounded() / 100 < 20 && !latencies.isEmpty && measured.failures == 0
            ),
            BenchmarkRow(
                name: "emulator-resident-growth", value: (growth * 100).rounded() / 100,
                unit: "MiB over requests \(warmup)...\(residentTotal)"
                    + (residentFailures > 0 ? " (\(residentFailures) failed)" : ""),
                baseline: (Double(before) / 1_048_576 * 100).rounded() / 100, ratio: nil,
                // A resident size that could not be read (0) is no growth.
                target: "< 16 MiB",
                met: (growth * 100).rounded() / 100 < 16 && residentFailures == 0 && before > 0 && after > 0),
        ]
    }

    /// Requests/s of the HTTP server with a handler that does nothing; 0 when any of its requests
    /// failed (the baseline is then not measured, and the row not met).
    private static func plainServerRate(clients: Int, seconds: Double) throws -> Double {
        let server = HTTPServer(
            configuration: .init(maxConnections: 64),
            handler: { _ in
                .respond(HTTPResponse.json(status: 200, Data(#"{"operations":[]}"#.utf8)))
            })
        let address = try server.start()
        defer { server.stop() }
        let request = Array("GET /plain HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        // Calibrate: a short run, then one sized to last about `seconds`.
        let probe = try LoadRun.run(port: address.port, clients: clients, requestsPerClient: 500) { _, count in
            Array(repeating: request, count: count)
        }
        let perClient = max(500, Int(Double(probe.completed) / probe.seconds * seconds) / clients)
        let run = try LoadRun.run(port: address.port, clients: clients, requestsPerClient: perClient) { _, count in
            Array(repeating: request, count: count)
        }
        guard probe.failures == 0, run.failures == 0 else { return 0 }
        return Double(run.completed) / run.seconds
    }

    static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }
}

/// Concurrent keep-alive clients on dedicated threads; requests are built before the clock starts.
enum LoadRun {
    /// How long a chunk of ``runInChunks(port:clients:requests:makeRequests:)`` should take to
    /// send, at the rate of the chunk before: a tenth of the bench backend's tolerance
    /// (``EmulatorBenchmarks/toleranceMillis``). Its signing, just before, takes about as long
    /// again (a signature costs less than the backend's check of it), so its first request is at
    /// most a few seconds old when the last one goes.
    static let chunkSeconds = 1.0
    /// The first chunk, before any rate is known: sent within a second at 1,000 requests/s.
    static let firstChunkRequests = 1_000
    /// The largest chunk, however fast the machine: its requests are held in memory at once.
    static let maximumChunkRequests = 20_000

    /// The size of the next chunk: what `rate` (requests/s of the chunk before; nil before the
    /// first) sends in ``chunkSeconds``, a whole number per client, from one per client to
    /// ``maximumChunkRequests``. A fixed 20,000 was sent over more than the 10 s tolerance below
    /// 2,000 requests/s, and its last requests had gone stale (401s) before they were sent.
    static func chunkRequests(rate: Double?, clients: Int) -> Int {
        let clients = max(1, clients)
        guard let rate, rate.isFinite, rate > 0 else { return max(clients, firstChunkRequests / clients * clients) }
        let sent = min(Double(maximumChunkRequests), rate * chunkSeconds)
        return max(clients, Int(sent) / clients * clients)
    }

    /// `requests` in all, in chunks sized by ``chunkRequests(rate:clients:)``, each signed just
    /// before it is sent: a long run signed at once sent its last requests after they had gone
    /// stale (401s, from `--seconds` of about 30). Stops after a chunk with failures; the times
    /// add up, the signing between chunks not included.
    static func runInChunks(
        port: Int, clients: Int, requests: Int, makeRequests: (Int, Int) -> [[UInt8]]
    ) throws -> Result {
        var (completed, failures, seconds, latencies) = (0, 0, 0.0, [Double]())
        var remaining = requests
        var rate: Double?
        while remaining > 0 && failures == 0 {
            let count = min(chunkRequests(rate: rate, clients: clients), remaining)
            let chunk = try run(
                port: port, requestsPerClient: shares(of: count, clients: clients), makeRequests: makeRequests)
            completed += chunk.completed
            failures += chunk.failures
            seconds += chunk.seconds
            latencies.append(contentsOf: chunk.latencies)
            remaining -= count
            if chunk.seconds > 0 { rate = Double(chunk.completed) / chunk.seconds }
        }
        return Result(completed: completed, failures: failures, seconds: seconds, latencies: latencies)
    }

    /// `count` requests split among `clients` as evenly as whole requests go, the first clients
    /// taking one more: all of them are sent, none twice (a chunk's last requests that did not
    /// divide by the clients went unsent, and the row's request count was not what was sent).
    static func shares(of count: Int, clients: Int) -> [Int] {
        let clients = max(1, clients)
        let (each, extra) = (max(0, count) / clients, max(0, count) % clients)
        return (0..<clients).map { each + ($0 < extra ? 1 : 0) }
    }

    struct Result {
        let completed: Int
        let failures: Int
        let seconds: Double
        let latencies: [Double]
    }

    static func run(
        port: Int, clients: Int, requestsPerClient: Int,
        makeRequests: (Int, Int) -> [[UInt8]]
    ) throws -> Result {
        try run(
            port: port, requestsPerClient: Array(repeating: requestsPerClient, count: clients),
            makeRequests: makeRequests)
    }

    /// One client per element of `requestsPerClient`, each sending that many requests (a client
    /// with none opens no connection).
    static func run(
        port: Int, requestsPerClient: [Int],
        makeRequests: (Int, Int) -> [[UInt8]]
    ) throws -> Result {
        let prepared = requestsPerClient.enumerated().map { makeRequests($0.offset, $0.element) }
        let outcomes = Locked<[(Int, Int, [Double])]>([])
        let group = DispatchGroup()
        let start = Measurement.monotonicSeconds()
        for requests in prepared where !requests.isEmpty {
            group.enter()
            Thread {
                var ok = 0
                var failed = 0
                var latencies: [Double] = []
                latencies.reserveCapacity(requests.count)
                if let client = try? LoopbackHTTPClient(port: port) {
                    for request in requests {
                        let began = Measurement.monotonicSeconds()
                        if let status = try? client.roundTrip(request), status == 200 {
                            ok += 1
                        } else {
                            failed += 1
                            break
                        }
                        latencies.append(Measurement.monotonicSeconds() - began)
                    }
                } else {
                    failed += 1
                }
                outcomes.withLock { $0.append((ok, failed, latencies)) }
                group.leave()
            }.start()
        }
        guard group.wait(timeout: .now() + 600) == .success else {
            throw BenchmarkError("load clients did not finish in 10 minutes")
        }
        let seconds = Measurement.monotonicSeconds() - start
        let all = outcomes.withLock { $0 }
        return Result(
            completed: all.reduce(0) { $0 + $1.0 }, failures: all.reduce(0) { $0 + $1.1 },
            seconds: seconds, latencies: all.flatMap(\.2))
    }
}

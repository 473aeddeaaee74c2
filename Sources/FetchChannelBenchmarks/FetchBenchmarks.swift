import DeviceSigning
import FetchChannel
import FetchChannelEmulator
import Foundation

/// The fetch client against eight reference backends on loopback.
public enum FetchBenchmarks {
    /// `fetch-8-backends`: wall time of one fetch from eight backends, one of which answers after
    /// 300 ms (baseline: the 300 ms delay; target ratio ≤ 1.25, which proves the requests run
    /// concurrently). `fetch-client-cpu`: client CPU per fetch of 20 operations from one backend
    /// (process CPU with the fetch client minus process CPU for the same answers fetched by a bare
    /// socket client with pre-signed requests), target ≤ 200 µs.
    public static func rows(rounds: Int = 5) async throws -> [BenchmarkRow] {
        let delayMillis = 300.0
        var backends: [ReferenceBackend] = []
        defer { backends.forEach { $0.stop() } }
        var registrations: [FetchRegistration] = []
        for index in 0..<8 {
            let backend = try ReferenceBackend.start()
            backends.append(backend)
            let key = try P256.Signing.PrivateKey()
            let deviceId = "bench-\(index)"
            let target = try backend.registerDispatchTarget(deviceId: deviceId, signatureKey: key.publicKey)
            try backend.dispatch(deviceId: deviceId, channel: "link", lifetimeSeconds: 3_600)
            registrations.append(FetchRegistration(server: backend.baseURL, deviceId: deviceId, dispatchTargetId: target, key: key))
        }
        let client = FetchClient()
        _ = await client.pendingOutOfBandOperations(registrations)  // warm up connections
        var walls: [Double] = []
        for _ in 0..<rounds {
            try backends[3].injectFault(EmulatorFault(endpoint: .operations, kind: .delay, seconds: delayMillis / 1000, count: 1))
            let start = Measurement.monotonicSeconds()
            let result = await client.pendingOutOfBandOperations(registrations)
            walls.append((Measurement.monotonicSeconds() - start) * 1000)
            guard result.errors.isEmpty, result.operations.count == 8 else {
                throw BenchmarkError("the eight-backend fetch failed: \(result.errors.map(\.code))")
            }
        }
        let wall = Measurement.median(walls)
        let ratio = wall / delayMillis

        let cpu = try await clientCPUPerFetch(backend: backends[0], fetches: 300)
        return [
            BenchmarkRow(name: "fetch-8-backends", value: (wall * 10).rounded() / 10, unit: "ms per fetch (8 backends, one delayed 300 ms)",
                         baseline: delayMillis, ratio: (ratio * 1000).rounded() / 1000, target: "<= 1.25", met: ratio <= 1.25),
            BenchmarkRow(name: "fetch-client-cpu", value: cpu.client.rounded(), unit: "µs CPU per fetch of 20 operations (≈, see notes)",
                         baseline: cpu.bare.rounded(), ratio: nil, target: "<= 200 µs", met: cpu.client <= 200),
        ]
    }

    private static func clientCPUPerFetch(backend: ReferenceBackend, fetches: Int) async throws -> (client: Double, bare: Double) {
        let key = try P256.Signing.PrivateKey()
        let deviceId = "bench-cpu"
        let target = try backend.registerDispatchTarget(deviceId: deviceId, signatureKey: key.publicKey)
        for _ in 0..<20 { try backend.dispatch(deviceId: deviceId, channel: "firebase-cloud-messaging", lifetimeSeconds: 3_600) }
        let registration = FetchRegistration(server: backend.baseURL, deviceId: deviceId, dispatchTargetId: target, key: key)
        let client = FetchClient()
        _ = await client.pendingOutOfBandOperations([registration])

        let before = processCPUSeconds()
        for _ in 0..<fetches {
            let result = await client.pendingOutOfBandOperations([registration])
            guard result.operations.count == 20 else { throw BenchmarkError("expected 20 operations, got \(result.operations.count)") }
        }
        let withClient = (processCPUSeconds() - before) / Double(fetches)

        let signer = try DeviceSignatureSigner(key: key, dispatchTargetId: target, clock: SystemWallClock())
        let requests = try (0..<fetches).map { _ in
            LoopbackHTTPClient.operationsRequest(deviceId: deviceId, signature: try signer.headerValue())
        }
        let bare = try LoopbackHTTPClient(port: backend.baseURL.port ?? 0)
        let bareBefore = processCPUSeconds()
        for request in requests where try bare.roundTrip(request) != 200 {
            throw BenchmarkError("the bare client's fetch failed")
        }
        let serverOnly = (processCPUSeconds() - bareBefore) / Double(fetches)
        return (max(0, withClient - serverOnly) * 1e6, serverOnly * 1e6)
    }

    static func processCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

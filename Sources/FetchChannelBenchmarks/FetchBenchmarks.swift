import DeviceSigning
import FetchChannel
import FetchChannelEmulator
import Foundation

/// The fetch client against eight reference backends on loopback.
package enum FetchBenchmarks {
    /// `fetch-8-backends`: wall time of one fetch from eight backends, one of which answers after
    /// 300 ms (baseline: the 300 ms delay; target ratio ≤ 1.25, which proves the requests run
    /// concurrently). Then the client CPU rows of ``ClientCPUBenchmark``: `fetch-client-cpu`,
    /// `fetch-client-cpu-tls` and `fetch-client-cpu-jwe`.
    /// `seconds` (the suite's measuring time of a rate row) sizes the CPU rows' rounds.
    package static func rows(rounds: Int = 5, seconds: Double = 4) async throws -> [BenchmarkRow] {
        // The eight backends are stopped (their threads ended, their connections closed) before
        // the client's CPU is measured.
        let eightBackends = try await eightBackendsRow(rounds: rounds)
        let cpuRows = try await ClientCPUBenchmark.rows(fetchesPerRound: max(20, Int(seconds * 50)))
        return [eightBackends] + cpuRows
    }

    /// The delay of the one slow backend of `fetch-8-backends`, the row's baseline.
    static let delayMillis = 300.0

    /// `fetch-8-backends`.
    private static func eightBackendsRow(rounds: Int) async throws -> BenchmarkRow {
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
            registrations.append(
                FetchRegistration(server: backend.baseURL, deviceId: deviceId, dispatchTargetId: target, key: key))
        }
        let client = FetchClient()
        _ = await client.pendingOutOfBandOperations(registrations)  // warm up connections
        var walls: [Double] = []
        for _ in 0..<rounds {
            try backends[3].injectFault(
                EmulatorFault(endpoint: .operations, kind: .delay, seconds: delayMillis / 1000, count: 1))
            let start = Measurement.monotonicSeconds()
            let result = await client.pendingOutOfBandOperations(registrations)
            walls.append((Measurement.monotonicSeconds() - start) * 1000)
            guard result.errors.isEmpty, result.operations.count == 8 else {
                throw FetchFailure.error("the eight-backend fetch failed with", result)
            }
        }
        return eightBackendsRow(wallMillis: Measurement.median(walls))
    }

    /// The `fetch-8-backends` row of a median wall time. The wall time is printed to 0.1 ms, and
    /// the ratio is that over the delay, rounded toward failing; both are judged as printed. A
    /// fetch faster than the delay means the delay did not happen: nothing was measured, not met.
    static func eightBackendsRow(wallMillis: Double) -> BenchmarkRow {
        let wall = (wallMillis * 10).rounded() / 10
        let ratio = Measurement.ratio(wall, over: delayMillis, rounding: .up)
        return BenchmarkRow(
            name: "fetch-8-backends", value: wall,
            unit: "ms per fetch (8 backends, one delayed 300 ms)",
            baseline: delayMillis, ratio: ratio, target: "<= 1.25",
            met: wall >= delayMillis && ratio.map { $0 <= 1.25 } ?? false)
    }
}

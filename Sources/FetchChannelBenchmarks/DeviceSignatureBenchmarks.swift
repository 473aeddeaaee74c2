import DeviceSigning

/// Device-Signature header build rate against the raw signing rate of the same key.
package enum DeviceSignatureBenchmarks {
    /// `device-signature`: headers/s vs the C baseline's EVP_PKEY_sign/s, target ratio ≥ 0.85.
    package static func row(seconds: Double) throws -> BenchmarkRow {
        let key = try P256.Signing.PrivateKey()
        let signer = try DeviceSignatureSigner(
            key: key, dispatchTargetId: "3f6d1c9e-8a57-4a8e-9a51-4d3c8a0b2f11",
            clock: SystemWallClock())
        let baseline = try OpenSSLBaseline(key: key)
        let batch = 64
        var failures = 0
        let rates = Measurement.compare(
            rounds: 5, secondsPerRound: max(0.05, seconds / 10), batch: batch,
            candidate: {
                for _ in 0..<batch where (try? signer.headerValue()) == nil { failures += 1 }
            },
            baseline: {
                failures += batch - baseline.sign(iterations: batch)
            })
        guard failures == 0 else {
            throw BenchmarkError("\(failures) operations failed during the device-signature benchmark")
        }
        return SigningBenchmarks.ratioRow(
            "device-signature", rates.candidate, rates.baseline, unit: "headers/s (baseline: raw signs/s)", target: 0.85
        )
    }
}

import DeviceSigning
import FetchChannelEmulator
import Foundation

/// `tpm-sign`: ES256 signatures per second with a TPM-bound key (OpenSSL's tpm2 provider) against
/// a software TPM the bench starts and stops, next to the in-process software signing rate. It is
/// reported, not judged: every TPM signature is a round trip to the TPM (swtpm over loopback here;
/// a hardware TPM is slower still, tens of signatures per second), which is the price of a key
/// that never leaves the device. Without swtpm or the provider the row says it was skipped.
enum TPMSigningBenchmark {
    static let name = "tpm-sign"

    static func row(seconds: Double) throws -> BenchmarkRow {
        let message = Array(#"eyJhbGciOiJFUzI1NiJ9.eyJkaXNwYXRjaFRhcmdldElkIjoieCJ9"#.utf8)
        let software = try P256.Signing.PrivateKey()
        let batch = 8
        var failures = 0
        let softwareRate = Measurement.rate(batch: batch, minimumSeconds: max(0.05, seconds / 4)) {
            for _ in 0..<batch where (try? software.signature(for: message)) == nil { failures += 1 }
        }
        guard let missing = SoftwareTPM.missingPrerequisites else {
            let tpm = try SoftwareTPM()
            defer { tpm.stop() }
            let key = try P256.Signing.PrivateKey(generatingInTPM: tpm.configuration())
            let tpmRate = Measurement.rate(batch: batch, minimumSeconds: max(0.05, seconds / 2)) {
                for _ in 0..<batch where (try? key.signature(for: message)) == nil { failures += 1 }
            }
            guard failures == 0 else {
                throw BenchmarkError("\(failures) signatures failed during the \(name) benchmark")
            }
            let ratio = Measurement.ratio(
                tpmRate.rounded(), over: softwareRate.rounded(), rounding: .toNearestOrAwayFromZero)
            return BenchmarkRow(
                name: name, value: tpmRate.rounded(),
                unit: "signatures/s through the tpm2 provider "
                    + "and swtpm (baseline: in-process software signs/s)",
                baseline: softwareRate.rounded(), ratio: ratio,
                target: "reported", met: true)
        }
        // Nothing was measured: not met, as every row that could not measure.
        return BenchmarkRow(
            name: name, value: 0, unit: "skipped: \(missing) (baseline: software signs/s)",
            baseline: softwareRate.rounded(), ratio: nil, target: "reported", met: false)
    }
}

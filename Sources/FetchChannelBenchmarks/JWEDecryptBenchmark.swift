import DeviceSigning
import Foundation

/// Decrypting the backend's encrypted answer against the key agreement it cannot avoid.
package enum JWEDecryptBenchmark {
    /// `jwe-decrypt`: decryptions/s of a 20-operation answer (ECDH-ES, A256GCM, as the reference
    /// backend sends it) against ECDH derives/s of the same key through the public API; target
    /// ratio ≥ 0.85: parsing, the `epk` check, the Concat KDF and AES-GCM add at most 18 %.
    package static func row(seconds: Double) throws -> BenchmarkRow {
        let key = try P256.KeyAgreement.PrivateKey()
        let peer = try P256.KeyAgreement.PrivateKey().publicKey
        let plaintext = try ClientCPUBenchmark.answerBody()
        let compact = try JWE.encrypt(plaintext, to: key.publicKey)
        let batch = 16
        var failures = 0
        let rates = Measurement.compare(
            rounds: 5, secondsPerRound: max(0.05, seconds / 10), batch: batch,
            candidate: {
                for _ in 0..<batch where (try? JWE.decrypt(compact, with: key))?.count != plaintext.count {
                    failures += 1
                }
            },
            baseline: {
                for _ in 0..<batch where (try? key.sharedSecretFromKeyAgreement(with: peer)) == nil { failures += 1 }
            })
        guard failures == 0 else {
            throw BenchmarkError("\(failures) operations failed during the jwe-decrypt benchmark")
        }
        let unit =
            "decryptions/s of a 20-operation answer (\(plaintext.count) bytes; ECDH-ES, A256GCM; "
            + "baseline: ECDH derives/s)"
        return SigningBenchmarks.ratioRow("jwe-decrypt", rates.candidate, rates.baseline, unit: unit, target: 0.85)
    }
}

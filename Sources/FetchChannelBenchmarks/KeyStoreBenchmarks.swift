import DeviceSigning
import FetchChannelEmulator
import Foundation

/// How long opening a stored key takes with the default KDF: the cost a user pays per start-up.
package enum KeyStoreBenchmarks {
    package static func loadRow(kdf: KeyDerivation = .default) throws -> BenchmarkRow {
        // Registered as it is made, so that a signal the bench catches removes it too; the store
        // does not make it again once removed.
        let (directory, registration) = try TerminationCleanup.makeTemporaryDirectory(prefix: "fetchchannel-bench-")
        defer { registration.undo() }
        let store = try KeyStore(directory: directory, createIfMissing: false)
        let passphrase = SecureBytes(Array("benchmark passphrase".utf8))
        let key = try P256.Signing.PrivateKey()
        let keyId = try store.save(
            key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: passphrase, kdf: kdf)
        var timings: [Double] = []
        for _ in 0..<3 {
            let start = Measurement.monotonicSeconds()
            let loaded = try store.load(keyId, passphrase: passphrase)
            timings.append((Measurement.monotonicSeconds() - start) * 1000)
            guard loaded.publicKey == key.publicKey else {
                throw BenchmarkError("the loaded key differs from the saved one")
            }
        }
        let milliseconds = Measurement.median(timings)
        return BenchmarkRow(
            name: "keystore-load", value: (milliseconds * 10).rounded() / 10,
            unit: "ms per load (\(kdf), AES-256-CBC)", baseline: nil, ratio: nil,
            target: "< 1000 ms", met: (milliseconds * 10).rounded() / 10 < 1000)
    }
}

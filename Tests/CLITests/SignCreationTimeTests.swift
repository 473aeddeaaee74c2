import DeviceSigning
import FetchChannelCLI
import FetchChannelTestSupport
import Foundation
import Testing

/// `sign` without `--at` stamps the time the signature is made, not the time the command
/// started: opening the key may wait at a passphrase prompt (or for a TPM) for as long as the
/// person takes. Run in-process with an injected clock that the prompt moves; on a thread of its
/// own, since the key's passphrase is derived (scrypt).
@Suite(.dedicatedThread) struct SignCreationTimeTests {
    @Test func theCreationTimeIsReadAfterThePassphrasePrompt() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sign-creation-time-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = try P256.Signing.PrivateKey()
        let keyId = try KeyStore(directory: directory).save(
            key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: SecureBytes(Array("passphrase".utf8)))
        // Well after the real time: a time read from the system clock cannot pass for it.
        let start: Int64 = 4_000_000_000_000
        let promptTook: Int64 = 90_000
        let clock = ManualWallClock(millis: start)
        var context = CLIContext.inMemory(environment: ["HOME": directory.path])
        context.wallClock = clock
        context.passphrasePrompt = { _ in
            clock.advance(byMillis: promptTook)
            return Array("passphrase".utf8)
        }

        let status = await FetchChannelCLI.run(
            ["sign", "--key", keyId, "--dispatch-target", "target-1", "--store", directory.path, "--json"],
            context: context)

        try #require(status == 0, "\(context.standardError.capturedText)")
        let output = Data(context.standardOutput.capturedText.utf8)
        let object = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
        let printed = try #require(object["creationTimeInEpochMillis"] as? Int64, "\(object)")
        #expect(printed >= start + promptTook, "the time before the prompt: \(printed)")
        let value = try #require(object["deviceSignature"] as? String)
        let payload = try CompactJWS(parsing: value).verifiedPayload(with: key.publicKey)
        let signed = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        #expect(signed["creationTimeInEpochMillis"] as? Int64 == printed, "\(signed)")
    }
}

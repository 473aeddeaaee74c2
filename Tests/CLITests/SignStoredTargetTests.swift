import DeviceSigning
import FetchChannelCLI
import FetchChannelTestSupport
import Foundation
import Testing

/// `sign` without `--dispatch-target` signs for the target the key's registration stores. A
/// stored target the signer refuses (a record edited by hand) is the store's fault, not the
/// command line's: exit 1 naming the key, not a usage error about an option nobody gave.
@Suite(.dedicatedThread) struct SignStoredTargetTests {
    /// A store of one unencrypted key registered with a target holding a control character; the
    /// store's directory and the key's id.
    static func storeWithABadTarget() throws -> (URL, String) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("sign-stored-target-\(UUID().uuidString)", isDirectory: true)
        let key = try P256.Signing.PrivateKey()
        let keyId = try KeyStore(directory: directory).save(
            key, metadata: KeyMetadata(publicKey: key.publicKey, dispatchTargetId: "target\u{1}"), passphrase: nil,
            allowUnencrypted: true)
        return (directory, keyId)
    }

    @Test func aStoredTargetTheSignerRefusesIsAStoreError() async throws {
        let (directory, keyId) = try Self.storeWithABadTarget()
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = CLIContext.inMemory(environment: ["HOME": directory.path])

        let status = await FetchChannelCLI.run(
            ["sign", "--key", keyId, "--store", directory.path, "--json"], context: context)

        let errorText = context.standardError.capturedText
        #expect(status == 1, "\(errorText)")
        #expect(errorText.contains("key \(keyId) is registered with a dispatch target id"), "\(errorText)")
        #expect(errorText.contains("U+0001"), "\(errorText)")
        #expect(!errorText.contains("invalid value for '--dispatch-target'"), "\(errorText)")
        #expect(context.standardOutput.capturedText.isEmpty)
    }

    @Test func aGivenTargetStillOverridesTheStoredOne() async throws {
        let (directory, keyId) = try Self.storeWithABadTarget()
        defer { try? FileManager.default.removeItem(at: directory) }
        let context = CLIContext.inMemory(environment: ["HOME": directory.path])

        let status = await FetchChannelCLI.run(
            ["sign", "--key", keyId, "--dispatch-target", "given", "--store", directory.path, "--json"],
            context: context)

        #expect(status == 0, "\(context.standardError.capturedText)")
        #expect(context.standardOutput.capturedText.contains("\"dispatchTargetId\":\"given\""))
    }
}

import Testing

@testable import FetchChannelCLI

/// A rotation that stops before its request is sent removes its new key again. When that removal
/// fails too, the error names the key left behind: the cause alone (a store lock's "nothing was
/// changed") said the store was as before, and the next rotation took the key for an earlier one's.
@Suite struct RotateUnsentTests {
    static let newKeyId = "NEWKEYNEWKEYNEWKEYNEWKEYNEWKEYNEWKEYNEWKEY0"
    static let oldKeyId = "OLDKEYOLDKEYOLDKEYOLDKEYOLDKEYOLDKEYOLDKEY0"
    static let cause = CLIFailure(
        .keyStore, "The lock on /keys has been held by another writer for more than 30 seconds; nothing was changed.")

    @Test func aRemovedNewKeyLeavesTheCauseAsItWas() {
        var removed = false
        let error = RotateCommand.unsent(Self.cause, newKeyId: Self.newKeyId, oldKeyId: Self.oldKeyId) {
            removed = true
        }
        #expect(removed)
        #expect((error as? CLIFailure)?.message == Self.cause.message, "\(error)")
    }

    @Test func aNewKeyThatCannotBeRemovedIsNamed() throws {
        let error = RotateCommand.unsent(Self.cause, newKeyId: Self.newKeyId, oldKeyId: Self.oldKeyId) {
            throw CLIFailure(.keyStore, "the store's lock is held by another writer")
        }
        let message = try #require((error as? CLIFailure)?.message, "\(error)")
        #expect(
            message.hasPrefix("the rotation stopped before anything was sent, but left its new key \(Self.newKeyId)"),
            "\(message)")
        #expect(message.contains("'fetchchannel key delete \(Self.newKeyId)'"), "\(message)")
        #expect(message.contains("the store's lock is held by another writer"), "\(message)")
        #expect(message.contains("Key \(Self.oldKeyId) stays registered"), "\(message)")
    }
}

import DeviceSigning
import Foundation

/// `fetchchannel key delete`: a key removed from the key store (the backend is not told).
struct KeyDeleteCommand: CLICommand {
    static let spec = KeyOptions.spec(
        "delete",
        abstract: "Delete a key from the key store.",
        discussion:
            "Takes the full key id (no prefix), since this cannot be undone. The backend is not told: rotate or deregister first if the key is registered. --json prints {\"keyId\", \"deleted\": true}.",
        positionals: [PositionalSpec("KEYID", help: "The full key id (43 characters).")]
    )

    let access: KeyStoreAccess
    private var console: Console { access.console }
    let keyId: String

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        keyId = arguments.positionals[0]
        guard KeyStore.isValidKeyId(keyId) else {
            throw UsageError(
                .invalidValue, "'key delete' needs the full 43-character key id that 'fetchchannel key list' shows")
        }
        access = try KeyStoreAccess(arguments, context: context)
    }

    func run() async throws -> Int32 {
        let store = try access.open(create: false)
        // Only for the note below: a record that no longer reads must still be deletable.
        let metadata = try? store.metadata(keyId)
        try store.delete(keyId)
        if console.json {
            try console.printJSON(["keyId": keyId, "deleted": true])
        } else {
            console.line(keyId)
        }
        console.note("Deleted key \(keyId) from \(store.directory.path).")
        if let metadata, let target = metadata.dispatchTargetId {
            let server = metadata.server.map { " on " + BackendURL.shown($0) } ?? ""
            console.note(
                "note: it was registered as dispatch target \(target)\(server); the backend still holds its public key."
            )
        }
        return ExitCode.success
    }
}

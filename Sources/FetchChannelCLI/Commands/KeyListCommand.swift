import DeviceSigning
import Foundation

/// `fetchchannel key list`: the keys in the key store.
struct KeyListCommand: CLICommand {
    static let spec = KeyOptions.spec(
        "list",
        abstract: "List the keys in the key store.",
        discussion: "One line per key: key id, creation time, registration. --json prints an array of {\"keyId\", "
            + "\"publicJwk\", \"encryptionKey\", \"created\", \"protection\", \"dispatchTargetId\", \"deviceId\", "
            + "\"server\"}."
    )

    let access: KeyStoreAccess
    private var console: Console { access.console }

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        access = try KeyStoreAccess(arguments, context: context)
    }

    func run() async throws -> Int32 {
        var keys: [KeyMetadata] = []
        var unreadable: [KeyStore.UnreadableRecord] = []
        let exists = try access.exists()
        if exists {
            let listing = try access.open(create: false).listing()
            (keys, unreadable) = (listing.records, listing.unreadable)
        } else {
            console.note("No key store at \(access.directory.path) yet.")
        }
        if console.json {
            try console.printJSON(keys.map(KeyDescription.jsonObject))
        } else {
            for metadata in keys {
                let protection = metadata.isHardwareBound ? "  \(KeyProtection.tpm2)" : ""
                console.line(
                    "\(metadata.keyId)  \(KeyDescription.created(metadata))  " + KeyDescription.registration(metadata)
                        + protection)
            }
            if exists {
                console.note("\(keys.count) key\(keys.count == 1 ? "" : "s") in \(access.directory.path).")
            }
        }
        // The readable keys are listed; each unreadable record is named, with its fix, and fails the command.
        for record in unreadable {
            console.note("error: key \(record.keyId) cannot be read: \(record.error.reason)")
        }
        guard unreadable.isEmpty else {
            let count = unreadable.count == 1 ? "1 key record" : "\(unreadable.count) key records"
            throw CLIFailure(.keyStore, "\(count) of \(access.directory.path) cannot be read; each is named above")
        }
        return ExitCode.success
    }
}

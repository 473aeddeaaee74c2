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
        let keys: [KeyMetadata]
        let exists = try access.exists()
        if exists {
            keys = try access.open(create: false).list()
        } else {
            keys = []
            console.note("No key store at \(access.directory.path) yet.")
        }
        if console.json {
            try console.printJSON(keys.map(KeyDescription.jsonObject))
            return ExitCode.success
        }
        for metadata in keys {
            let protection = metadata.isHardwareBound ? "  \(KeyProtection.tpm2)" : ""
            console.line(
                "\(metadata.keyId)  \(KeyDescription.created(metadata))  " + KeyDescription.registration(metadata)
                    + protection)
        }
        if exists {
            console.note("\(keys.count) key\(keys.count == 1 ? "" : "s") in \(access.directory.path).")
        }
        return ExitCode.success
    }
}

import DeviceSigning
import Foundation

/// `fetchchannel key show`: a key's public JWKs, protection and registration (nothing secret).
struct KeyShowCommand: CLICommand {
    static let spec = KeyOptions.spec(
        "show",
        abstract: "Show a key's public JWK, protection and registration.",
        discussion: "Nothing secret is shown: the public JWKs of the signing key and of the encryption key (none for a "
            + "key made before encryption keys existed, until its next registration). --json prints the same object "
            + "as one element of 'key list --json'; its encryptionKey is the public JWK (\"use\":\"enc\") or null.",
        positionals: [KeyOptions.keyId]
    )

    let key: KeyReference
    let access: KeyStoreAccess
    private var console: Console { access.console }

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        key = try KeyReference(parsing: arguments.positionals[0])
        access = try KeyStoreAccess(arguments, context: context)
    }

    func run() async throws -> Int32 {
        let (store, keyId) = try access.openKey(key)
        let metadata = try store.metadata(keyId)
        if console.json {
            try console.printJSON(KeyDescription.jsonObject(metadata))
            return ExitCode.success
        }
        let files =
            "\(store.directory.path)/\(keyId).pem, " + (metadata.encryptionJWK == nil ? "" : ".enc.pem, ") + ".json"
        let rows = [
            ("Key id", metadata.keyId),
            ("Created", KeyDescription.created(metadata)),
            ("Protection", metadata.kdf ?? "unknown"),
            ("Public JWK", metadata.jwk.jsonString),
            ("Encryption JWK", metadata.encryptionJWK?.jsonString ?? "-"),
            ("Dispatch target", metadata.dispatchTargetId ?? "-"),
            ("Device id", metadata.deviceId ?? "-"),
            ("Server", metadata.server.map(BackendURL.shown) ?? "-"),
            ("TLS trust", KeyDescription.trust(metadata)),
            ("Files", files),
        ]
        for (name, value) in rows {
            // Stored values may come from a backend (the target id, the external id) or a hand edit.
            console.line(name + ":" + String(repeating: " ", count: 17 - name.count) + PrintableText.oneLine(value))
        }
        return ExitCode.success
    }
}

import DeviceSigning
import Foundation

/// What a key command parses once from `--store`, `--passphrase-file` and `--json`: opening its key
/// store, finding keys in it, and the console it reports on.
struct KeyStoreAccess: Sendable {
    /// Where the command writes (`--json` decides the shape).
    let console: Console
    /// `--store DIR`, else the default directory for this environment.
    let directory: URL
    /// Where the passphrase of an encrypted key comes from.
    let passphrases: PassphraseResolver
    let context: CLIContext

    /// The parse step's part: `--store`, `--passphrase-file` and `--json`.
    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        self.console = Console(arguments, context: context)
        if let store = try arguments[CommonOptions.store] {
            self.directory = try context.fileURL(store, isDirectory: true)
        } else {
            self.directory = try Self.defaultDirectory(context)
        }
        self.passphrases = PassphraseResolver(file: try arguments[CommonOptions.passphraseFile], context: context)
        self.context = context
    }

    /// The default store (``KeyStore/defaultDirectory(environment:)``), unless the variable it is
    /// found by is not UTF-8 text: read as text, its invalid bytes would each become U+FFFD, and
    /// the store would be made in another directory than that home, one that other such homes share.
    private static func defaultDirectory(_ context: CLIContext) throws(UsageError) -> URL {
        let consulted = KeyStore.defaultDirectoryVariable(environment: context.environment)
        if context.variablesNotUTF8.contains(consulted) {
            throw UsageError(
                .invalidValue,
                "\(consulted) is not UTF-8 text, so the default key store cannot be found; give it with --store DIR")
        }
        return KeyStore.defaultDirectory(environment: context.environment)
    }

    /// Whether the store directory exists (a fresh machine has none until a key is made).
    ///
    /// Only "no such file" (ENOENT) is "no store": any other failure to look (a parent without
    /// search permission, say) is thrown, so that no command takes an unreachable store for none.
    func exists() throws -> Bool {
        var info = stat()
        guard lstat(directory.path, &info) == 0 else {
            let code = errno
            guard code == ENOENT else {
                throw CLIFailure(
                    .keyStore, "cannot look for the key store \(directory.path): \(String(cString: strerror(code)))")
            }
            return false
        }
        // Another kind of file there is refused when the store is opened, with its reason.
        return true
    }

    /// The TPM of hardware-bound keys: the TCTI in this command's `TPM2OPENSSL_TCTI` unless empty,
    /// else the library's default (`device:/dev/tpmrm0`).
    var tpm: TPMConfiguration {
        let named = context.environment[TPMConfiguration.tctiVariable]
        return TPMConfiguration(tcti: named?.isEmpty == false ? named : nil)
    }

    /// Opens the store; `create` makes the directory (mode 0700) when it is missing.
    func open(create: Bool) throws -> KeyStore {
        if !create, try !exists() {
            throw CLIFailure(
                .keyStore,
                "the key store \(directory.path) does not exist; create a key with 'fetchchannel key generate' or give --store DIR"
            )
        }
        return try KeyStore(directory: directory, createIfMissing: create)
    }

    /// Opens the existing store and finds the key `reference` names: the store and the full key id.
    func openKey(_ reference: KeyReference) throws -> (KeyStore, String) {
        let store = try open(create: false)
        return (store, try resolve(reference, in: store))
    }

    /// The key a reference names: the full id, or the one key whose id starts with the prefix.
    func resolve(_ reference: KeyReference, in store: KeyStore) throws -> String {
        let text = reference.text
        if KeyStore.isValidKeyId(text) { return text }
        let matches = try store.keyIds().filter { $0.hasPrefix(text) }
        switch matches.count {
        case 1: return matches[0]
        case 0:
            throw CLIFailure(
                .keyStore,
                "no key in \(store.directory.path) has an id starting with '\(ArgumentParser.shown(text))'; "
                    + "'fetchchannel key list' shows the keys"
            )
        default:
            throw CLIFailure(
                .keyStore,
                "'\(ArgumentParser.shown(text))' matches \(matches.count) keys (\(matches.joined(separator: ", "))); give more of the key id"
            )
        }
    }

    /// Loads a private key, asking for its passphrase only when the key is encrypted. Returns
    /// the key and the passphrase that opened it (nil for an unencrypted key).
    func loadPrivateKey(_ keyId: String, from store: KeyStore) throws -> (P256.Signing.PrivateKey, SecureBytes?) {
        try withPassphraseIfNeeded(keyId) { try store.load(keyId, passphrase: $0, tpm: tpm) }
    }

    /// Loads the encryption key of `keyId` as `loadPrivateKey` loads its signing key; nil when the
    /// entry has none yet.
    func loadEncryptionKey(
        _ keyId: String,
        from store: KeyStore
    ) throws -> (P256.KeyAgreement.PrivateKey?, SecureBytes?) {
        try withPassphraseIfNeeded(keyId) { try store.loadEncryptionKey(keyId, passphrase: $0, tpm: tpm) }
    }

    /// Runs `body` without a passphrase and, when the key turns out to be encrypted, again with
    /// the one the user gives; returns its result and that passphrase (nil when none was needed).
    func withPassphraseIfNeeded<Result>(
        _ keyId: String,
        _ body: (SecureBytes?) throws -> Result
    ) throws -> (Result, SecureBytes?) {
        do {
            return (try body(nil), nil)
        } catch let error as DeviceSigningError where error.code == .passphraseRequired {
            let passphrase = try passphrases.passphrase(for: .open(keyId: keyId))
            do {
                return (try body(passphrase), passphrase)
            } catch let error as DeviceSigningError where error.code == .wrongPassphrase {
                throw CLIFailure(
                    .passphrase,
                    "the passphrase does not open key \(keyId); check --passphrase-file or FETCHCHANNEL_PASSPHRASE")
            }
        }
    }
}

/// The public description of a stored key, as `key list`, `key show` and `--json` print it.
/// Nothing here is secret.
enum KeyDescription {
    static func created(_ metadata: KeyMetadata) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: metadata.created)
    }

    /// The members of a public JWK; `use` only when the JWK states it (an encryption key's `"enc"`).
    static func jwkObject(_ jwk: JWK) -> [String: Any] {
        var object: [String: Any] = ["kty": jwk.kty, "crv": jwk.crv, "x": jwk.x, "y": jwk.y]
        if let use = jwk.use { object["use"] = use }
        return object
    }

    static func jsonObject(_ metadata: KeyMetadata) -> [String: Any] {
        [
            "keyId": metadata.keyId,
            "publicJwk": jwkObject(metadata.jwk),
            "encryptionKey": JSONOutput.orNull(metadata.encryptionJWK.map(jwkObject)),
            "created": created(metadata),
            "protection": JSONOutput.orNull(metadata.kdf),
            "dispatchTargetId": JSONOutput.orNull(metadata.dispatchTargetId),
            "deviceId": JSONOutput.orNull(metadata.deviceId),
            "server": JSONOutput.orNull(metadata.server.map(BackendURL.shown)),
            "caFile": JSONOutput.orNull(metadata.serverCAFile),
            "pins": metadata.serverPins ?? [],
        ]
    }

    /// How the backend's certificate is checked: `system CAs`, `CA file PATH`, plus the pins.
    static func trust(_ metadata: KeyMetadata) -> String {
        guard metadata.server != nil else { return "-" }
        let anchors = metadata.serverCAFile.map { "CA file \($0)" } ?? "system CAs"
        guard let pins = metadata.serverPins, !pins.isEmpty else { return anchors }
        return anchors + ", pinned to " + pins.joined(separator: ", ")
    }

    /// `registered as <id> on <server> (device <deviceId>)` or `not registered`.
    static func registration(_ metadata: KeyMetadata) -> String {
        guard let target = metadata.dispatchTargetId else { return "not registered" }
        var text = "dispatch target \(target)"
        if let server = metadata.server { text += " on \(BackendURL.shown(server))" }
        if let device = metadata.deviceId { text += " (device \(device))" }
        return PrintableText.oneLine(text)
    }
}

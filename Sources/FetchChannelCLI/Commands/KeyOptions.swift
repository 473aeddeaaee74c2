import DeviceSigning

/// What the `key …` commands share: their options and arguments, the protection of a key about
/// to be stored, and how a stored key is announced.
enum KeyOptions {
    static let noEncryption = Flag(
        "no-encryption", help: "Store the private key unencrypted (not recommended; no passphrase is asked for).")
    static let keyId = PositionalSpec("KEYID", help: "The key id, or at least its first 4 characters.")

    /// The spec of a `key …` command: `--store DIR` first and `--json` last (what `KeyStoreAccess`
    /// reads), the command's own options between them.
    static func spec(
        _ subcommand: String, abstract: String, discussion: String, options: [any OptionDeclaration] = [],
        positionals: [PositionalSpec] = []
    ) -> CommandSpec {
        CommandSpec(
            path: ["key", subcommand], abstract: abstract, discussion: discussion,
            options: [CommonOptions.store] + options + [CommonOptions.json], positionals: positionals)
    }
}

/// How a key about to be stored is protected, as `--no-encryption` and `--tpm` choose it.
enum NewKeyProtection: Sendable {
    /// Encrypted under a passphrase (from the file, the environment or the prompt).
    case passphrase
    /// Stored unencrypted (`--no-encryption`).
    case unencrypted
    /// Made in the TPM 2.0 (`--tpm`): the TPM protects it, no passphrase.
    case tpm

    /// The protection the flags ask for; a passphrase file beside a protection that takes none is
    /// a usage error.
    init(unencrypted: Bool, tpm: Bool, passphraseFileGiven: Bool) throws(UsageError) {
        if unencrypted && passphraseFileGiven {
            throw UsageError(
                .conflictingOptions,
                "--no-encryption stores the key without a passphrase; do not also give --passphrase-file")
        }
        if tpm && (unencrypted || passphraseFileGiven) {
            throw UsageError(
                .conflictingOptions,
                "--tpm keys are protected by the TPM and take no passphrase; do not also give "
                    + "--no-encryption or --passphrase-file")
        }
        self = tpm ? .tpm : unencrypted ? .unencrypted : .passphrase
    }
}

extension Console {
    /// The warning after a private key was stored without a passphrase.
    func warnStoredUnencrypted(in store: KeyStore) {
        note(
            "warning: the private key is stored unencrypted; anyone who can read \(store.directory.path) can sign "
                + "as this device.")
    }

    /// The key id of a key just stored, or `{"keyId", "publicJwk"}` with `--json`.
    func printStoredKey(_ keyId: String, publicKey: JWK) throws {
        if json {
            try printJSON(["keyId": keyId, "publicJwk": KeyDescription.jwkObject(publicKey)])
        } else {
            line(keyId)
        }
    }
}

import DeviceSigning
import Foundation

/// `fetchchannel key import`: a P-256 private key from a file into the key store.
struct KeyImportCommand: CLICommand {
    static let spec = KeyOptions.spec(
        "import",
        abstract: "Import a P-256 private key (PEM, private JWK or PKCS#8 DER) into the key store.",
        discussion:
            "Reads PKCS#8 PRIVATE KEY or ENCRYPTED PRIVATE KEY, SEC1 EC PRIVATE KEY (as made by 'openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256'), a private JWK, or PKCS#8 DER. An encrypted file is opened with the passphrase, which also protects the stored copy; an unencrypted one is stored under a passphrase unless --no-encryption. Prints the key id; --json prints {\"keyId\", \"publicJwk\"}.",
        options: [CommonOptions.passphraseFile, KeyOptions.noEncryption],
        positionals: [PositionalSpec("FILE", help: "The private key file.")]
    )

    let access: KeyStoreAccess
    private var console: Console { access.console }
    let file: URL
    let unencrypted: Bool
    let passphraseFileGiven: Bool

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        file = try context.fileURL(arguments.positionals[0])
        unencrypted = arguments[KeyOptions.noEncryption]
        passphraseFileGiven = arguments.contains(CommonOptions.passphraseFile)
        access = try KeyStoreAccess(arguments, context: context)
    }

    func run() async throws -> Int32 {
        let (key, filePassphrase) = try readKey()
        // As 'key generate' refuses it: the passphrase would open nothing and protect nothing.
        // (With an encrypted file it opens the file, and --no-encryption stores the key without it.)
        if unencrypted && passphraseFileGiven && filePassphrase == nil {
            throw UsageError(
                .conflictingOptions,
                "\(file.path) is not encrypted and --no-encryption stores the key without a passphrase; "
                    + "do not also give --passphrase-file")
        }
        let passphrase =
            unencrypted
            ? nil
            : try filePassphrase
                ?? access.passphrases.passphrase(for: .protect(what: "the imported key"), allowsNoEncryption: true)
        let store = try access.open(create: true)
        let keyId = try store.save(
            key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: passphrase,
            allowUnencrypted: passphrase == nil, encryptionKey: P256.KeyAgreement.PrivateKey())
        try console.printStoredKey(keyId, publicKey: key.publicKey.jwk)
        console.note("Imported key \(keyId) into \(store.directory.path)\(passphrase == nil ? " (unencrypted)" : "").")
        if passphrase == nil { console.warnStoredUnencrypted(in: store) }
        return ExitCode.success
    }

    /// The key in the file, and the passphrase that opened it when it was encrypted.
    /// The file's bytes are cleared once the key is built, and are never made a `String` (which is
    /// never zeroed): a PEM, encrypted or not, reaches OpenSSL as `SecureBytes`.
    private func readKey() throws -> (P256.Signing.PrivateKey, SecureBytes?) {
        var contents = try BoundedInput.read(file, what: "a key file")
        defer { contents.resetBytes(in: 0..<contents.count) }
        let contains = { (text: String) in contents.range(of: Data(text.utf8)) != nil }
        do {
            if KeyFiles.hasPEMLabel("ENCRYPTED PRIVATE KEY", in: contents) {
                // `cat plain.pem enc.pem`: which key was meant is unknown, and one is not protected.
                guard !KeyFiles.hasUnencryptedPrivateKeyBlock(in: contents) else {
                    throw CLIFailure(
                        .unreadableInput,
                        "\(file.path) holds an unencrypted private key beside the encrypted one; give a file with one key"
                    )
                }
                let passphrase = try access.passphrases.passphrase(for: .openFile(path: file.path))
                do {
                    let text = SecureBytes(contents)
                    return (try P256.Signing.PrivateKey(encryptedPEM: text, passphrase: passphrase), passphrase)
                } catch let error as DeviceSigningError where error.code == .wrongPassphrase {
                    throw CLIFailure(.passphrase, "the passphrase does not open \(file.path)")
                }
            } else if KeyFiles.hasPEMLabel("PUBLIC KEY", in: contents) && !contains("PRIVATE KEY-----") {
                throw CLIFailure(
                    .unreadableInput, "\(file.path) holds a public key; 'key import' needs the private key")
            } else if contains("-----BEGIN ") {
                return (try P256.Signing.PrivateKey(pemRepresentation: SecureBytes(contents)), nil)
            } else if KeyFiles.isJSONObject(contents) {
                let key = try KeyFiles.privateKey(
                    jwk: contents, in: file, needs: "'key import' needs the private key",
                    P256.Signing.PrivateKey.init(jwkRepresentation:))
                return (key, nil)
            }
            return (try P256.Signing.PrivateKey(derRepresentation: contents), nil)
        } catch let error as DeviceSigningError {
            throw CLIFailure(
                .unreadableInput, "\(file.path) is not a P-256 private key this tool reads: \(error.reason)")
        }
    }
}

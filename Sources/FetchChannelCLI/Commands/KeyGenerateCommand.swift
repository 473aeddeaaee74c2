import DeviceSigning
import Foundation

/// `fetchchannel key generate`: a new device key (and its encryption key) in the key store.
struct KeyGenerateCommand: CLICommand {
    static let tpm = Flag(
        "tpm",
        help: "Generate the key inside the TPM 2.0 (OpenSSL's tpm2 provider; "
            + "TCTI from TPM2OPENSSL_TCTI, else device:/dev/tpmrm0): the private key never leaves it, "
            + "and no passphrase is asked for.")

    static let spec = KeyOptions.spec(
        "generate",
        abstract: "Generate a P-256 device key in the key store and print its key id.",
        discussion: "The private key is stored as PKCS#8 ENCRYPTED PRIVATE KEY (scrypt N=16384, r=8, p=1; "
            + "AES-256-CBC) in <keyId>.pem, the public JWK and metadata in <keyId>.json, both mode 0600 in a 0700 "
            + "directory. The key's own P-256 encryption key (the backend encrypts its answers to it) is stored the "
            + "same way in <keyId>.enc.pem. With --tpm both keys are made in the TPM and the .pem files hold their "
            + "TSS2 PRIVATE KEY, which only that TPM can use. The key id is the RFC 7638 JWK thumbprint. "
            + "--json prints {\"keyId\", \"publicJwk\"}.",
        options: [CommonOptions.passphraseFile, KeyOptions.noEncryption, tpm]
    )

    let access: KeyStoreAccess
    private var console: Console { access.console }
    let protection: NewKeyProtection

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        protection = try NewKeyProtection(
            unencrypted: arguments[KeyOptions.noEncryption], tpm: arguments[Self.tpm],
            passphraseFileGiven: arguments.contains(CommonOptions.passphraseFile))
        access = try KeyStoreAccess(arguments, context: context)
    }

    func run() async throws -> Int32 {
        let passphrase =
            protection == .passphrase
            ? try access.passphrases.passphrase(for: .protect(what: "the new key"), allowsNoEncryption: true) : nil
        let store = try access.open(create: true)
        let inTPM = protection == .tpm
        let key = inTPM ? try P256.Signing.PrivateKey(generatingInTPM: access.tpm) : try P256.Signing.PrivateKey()
        let encryptionKey =
            inTPM
            ? try P256.KeyAgreement.PrivateKey(generatingInTPM: access.tpm) : try P256.KeyAgreement.PrivateKey()
        let keyId = try store.save(
            key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: passphrase,
            allowUnencrypted: passphrase == nil, encryptionKey: encryptionKey)
        let metadata = try store.metadata(keyId)
        try console.printStoredKey(keyId, publicKey: metadata.jwk)
        console.note("Generated key \(keyId) in \(store.directory.path) (\(metadata.kdf ?? "protection unknown")).")
        if protection == .unencrypted { console.warnStoredUnencrypted(in: store) }
        return ExitCode.success
    }
}

import DeviceSigning
import Foundation

/// `fetchchannel key …`: the device keys in the key store.
enum KeyCommands {
    static let all = [generate, list, show, export, importKey, delete]

    static let noEncryption = OptionSpec.flag(
        "no-encryption", help: "Store the private key unencrypted (not recommended; no passphrase is asked for).")
    static let keyIdArgument = PositionalSpec("KEYID", help: "The key id, or at least its first 4 characters.")
    static let tpm = OptionSpec.flag(
        "tpm",
        help: "Generate the key inside the TPM 2.0 (OpenSSL's tpm2 provider; "
            + "TCTI from TPM2OPENSSL_TCTI): the private key never leaves it, and no passphrase is asked for.")

    // MARK: key generate

    static let generate = Command(
        spec: CommandSpec(
            path: ["key", "generate"],
            abstract: "Generate a P-256 device key in the key store and print its key id.",
            discussion: "The private key is stored as PKCS#8 ENCRYPTED PRIVATE KEY (scrypt N=16384, r=8, p=1; "
                + "AES-256-CBC) in <keyId>.pem, the public JWK and metadata in <keyId>.json, both mode 0600 in a 0700 "
                + "directory. The key's own P-256 encryption key (the backend encrypts its answers to it) is stored the "
                + "same way in <keyId>.enc.pem. With --tpm both keys are made in the TPM and the .pem files hold their "
                + "TSS2 PRIVATE KEY, which only that TPM can use. The key id is the RFC 7638 JWK thumbprint. "
                + "--json prints {\"keyId\", \"publicJwk\"}.",
            options: [CommonOptions.store, CommonOptions.passphraseFile, noEncryption, tpm, CommonOptions.json]
        )
    ) { invocation in
        let arguments = invocation.arguments
        if arguments.flag("no-encryption") && arguments.value("passphrase-file") != nil {
            throw UsageError("--no-encryption stores the key without a passphrase; do not also give --passphrase-file")
        }
        let inTPM = arguments.flag("tpm")
        if inTPM && (arguments.flag("no-encryption") || arguments.value("passphrase-file") != nil) {
            throw UsageError(
                "--tpm keys are protected by the TPM and take no passphrase; do not also give "
                    + "--no-encryption or --passphrase-file")
        }
        let access = KeyStoreAccess(invocation: invocation)
        let passphrase =
            arguments.flag("no-encryption") || inTPM
            ? nil
            : try invocation.passphrases.passphrase(for: .protect(what: "the new key"), allowsNoEncryption: true)
        let store = try access.open(create: true)
        let key =
            inTPM
            ? try P256.Signing.PrivateKey(generatingInTPM: access.tpm)
            : try P256.Signing.PrivateKey()
        let encryptionKey =
            inTPM
            ? try P256.KeyAgreement.PrivateKey(generatingInTPM: access.tpm)
            : try P256.KeyAgreement.PrivateKey()
        let keyId = try store.save(
            key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: passphrase,
            allowUnencrypted: passphrase == nil, encryptionKey: encryptionKey)
        let metadata = try store.metadata(keyId)
        if invocation.json {
            invocation.standardOutput.line(
                try JSONOutput.text(["keyId": keyId, "publicJwk": KeyDescription.jwkObject(metadata.jwk)]))
        } else {
            invocation.standardOutput.line(keyId)
        }
        invocation.note("Generated key \(keyId) in \(store.directory.path) (\(metadata.kdf ?? "protection unknown")).")
        if passphrase == nil && !inTPM {
            invocation.note(
                "warning: the private key is stored unencrypted; anyone who can read \(store.directory.path) can sign as this device."
            )
        }
        return ExitCode.success
    }

    // MARK: key list

    static let list = Command(
        spec: CommandSpec(
            path: ["key", "list"],
            abstract: "List the keys in the key store.",
            discussion: "One line per key: key id, creation time, registration. --json prints an array of {\"keyId\", "
                + "\"publicJwk\", \"encryptionKey\", \"created\", \"protection\", \"dispatchTargetId\", \"deviceId\", "
                + "\"server\"}.",
            options: [CommonOptions.store, CommonOptions.json]
        )
    ) { invocation in
        let access = KeyStoreAccess(invocation: invocation)
        let keys: [KeyMetadata]
        if access.exists {
            keys = try access.open(create: false).list()
        } else {
            keys = []
            invocation.note("No key store at \(access.directory.path) yet.")
        }
        if invocation.json {
            invocation.standardOutput.line(try JSONOutput.text(keys.map(KeyDescription.jsonObject)))
        } else {
            for metadata in keys {
                let protection = metadata.isHardwareBound ? "  \(KeyProtection.tpm2)" : ""
                invocation.standardOutput.line(
                    "\(metadata.keyId)  \(KeyDescription.created(metadata))  "
                        + KeyDescription.registration(metadata) + protection)
            }
            if access.exists {
                invocation.note("\(keys.count) key\(keys.count == 1 ? "" : "s") in \(access.directory.path).")
            }
        }
        return ExitCode.success
    }

    // MARK: key show

    static let show = Command(
        spec: CommandSpec(
            path: ["key", "show"],
            abstract: "Show a key's public JWK, protection and registration.",
            discussion:
                "Nothing secret is shown: the public JWKs of the signing key and of the encryption key (none for a "
                + "key made before encryption keys existed, until its next registration). --json prints the same object "
                + "as one element of 'key list --json'; its encryptionKey is the public JWK (\"use\":\"enc\") or null.",
            options: [CommonOptions.store, CommonOptions.json],
            positionals: [keyIdArgument]
        )
    ) { invocation in
        let access = KeyStoreAccess(invocation: invocation)
        let store = try access.open(create: false)
        let keyId = try access.resolve(invocation.arguments.positionals[0], in: store)
        let metadata = try store.metadata(keyId)
        if invocation.json {
            invocation.standardOutput.line(try JSONOutput.text(KeyDescription.jsonObject(metadata)))
        } else {
            let rows = [
                ("Key id", metadata.keyId),
                ("Created", KeyDescription.created(metadata)),
                ("Protection", metadata.kdf ?? "unknown"),
                ("Public JWK", metadata.jwk.jsonString),
                ("Encryption JWK", metadata.encryptionJWK?.jsonString ?? "-"),
                ("Dispatch target", metadata.dispatchTargetId ?? "-"),
                ("Device id", metadata.deviceId ?? "-"),
                ("Server", metadata.server ?? "-"),
                ("TLS trust", KeyDescription.trust(metadata)),
                (
                    "Files",
                    "\(store.directory.path)/\(keyId).pem, "
                        + (metadata.encryptionJWK == nil ? "" : ".enc.pem, ") + ".json"
                ),
            ]
            for (name, value) in rows {
                invocation.standardOutput.line(name + ":" + String(repeating: " ", count: 17 - name.count) + value)
            }
        }
        return ExitCode.success
    }

    // MARK: key export

    static let export = Command(
        spec: CommandSpec(
            path: ["key", "export"],
            abstract: "Export a key's public key (or, with --private, the private key) as PEM, JWK or DER.",
            discussion: "The public key by default (PEM: SubjectPublicKeyInfo; JWK; DER). With --private the private "
                + "key is exported as PKCS#8 ENCRYPTED PRIVATE KEY (PEM or DER) under the key's passphrase; only with "
                + "--no-encryption as plain PKCS#8 or a private JWK, which is never printed to a terminal. A private "
                + "key written to a regular file (> key.pem) makes that file 0600 before anything is written. DER is "
                + "binary: it is written only when standard output is not a terminal. With --encryption all of this "
                + "applies to the key's encryption key instead (the key the backend encrypts operations answers to; its "
                + "public JWK carries \"use\":\"enc\"). --json prints {\"keyId\", \"format\", \"private\", "
                + "\"encrypted\", \"data\"} (DER as base64).",
            options: [
                CommonOptions.store.spec,
                .value("format", "pem|jwk|der", help: "The output format (default: pem)."),
                .flag("private", help: "Export the private key (encrypted unless --no-encryption)."),
                .flag("no-encryption", help: "With --private: export the private key unencrypted."),
                .flag("encryption", help: "Export the key's encryption key instead of its signing key."),
                CommonOptions.passphraseFile.spec,
                CommonOptions.json.spec,
            ],
            positionals: [keyIdArgument]
        )
    ) { invocation in
        let arguments = invocation.arguments
        let format = try arguments.choice("format", from: ["pem", "jwk", "der"]) ?? "pem"
        let isPrivate = arguments.flag("private")
        let unencrypted = arguments.flag("no-encryption")
        if unencrypted && !isPrivate {
            throw UsageError("--no-encryption applies to --private exports only; a public key is never encrypted")
        }
        if isPrivate && format == "jwk" && !unencrypted {
            throw UsageError("a private JWK cannot be encrypted; use --format pem or der, or add --no-encryption")
        }
        if format == "der" && !invocation.json && invocation.standardOutput.isTerminal {
            throw CLIFailure(
                "refusing to write binary DER to a terminal; redirect standard output to a file (> key.der), or use --format pem"
            )
        }
        let access = KeyStoreAccess(invocation: invocation)
        let store = try access.open(create: false)
        let keyId = try access.resolve(arguments.positionals[0], in: store)
        let encryption = arguments.flag("encryption")
        let metadata = try store.metadata(keyId)
        if encryption && metadata.encryptionJWK == nil {
            throw CLIFailure(
                "key \(keyId) has no encryption key yet (it was made before encryption keys existed); it "
                    + "gets one at its next 'fetchchannel register'")
        }
        if isPrivate, metadata.isHardwareBound {
            let what = encryption ? "private encryption key" : "private key"
            throw CLIFailure(
                "key \(keyId) is bound to a TPM 2.0: its \(what) never leaves the TPM, so it cannot "
                    + "be exported; export the public key instead (omit --private)")
        }

        var bytes: [UInt8]
        var encrypted = false
        if !isPrivate {
            let publicKey = try (encryption ? metadata.encryptionJWK ?? metadata.jwk : metadata.jwk).publicKey()
            switch format {
            case "jwk":
                bytes = Array(
                    ((encryption ? publicKey.jwk.withUse("enc") : publicKey.jwk).jsonString
                        + "\n").utf8)
            case "der": bytes = Array(publicKey.derRepresentation)
            default: bytes = Array(publicKey.pemRepresentation.utf8)
            }
        } else {
            if unencrypted && invocation.standardOutput.isTerminal {
                throw CLIFailure(
                    "refusing to print an unencrypted private key to a terminal, where it stays in the "
                        + "scrollback; redirect standard output to a file (> key.pem, made 0600) or a program")
            }
            if let problem = invocation.standardOutput.restrictRegularFileToOwner() {
                throw CLIFailure("cannot restrict the output file to its owner (\(problem)); nothing was written")
            }
            let (key, storePassphrase): (any ExportablePrivateKey, SecureBytes?)
            if encryption {
                let (encryptionKey, passphrase) = try access.loadEncryptionKey(keyId, from: store)
                guard let encryptionKey else { throw CLIFailure("key \(keyId) has no encryption key") }
                (key, storePassphrase) = (encryptionKey, passphrase)
            } else {
                (key, storePassphrase) = try access.loadPrivateKey(keyId, from: store)
            }
            if unencrypted {
                let secret: SecureBytes
                switch format {
                case "jwk": secret = try key.jwkRepresentation(includingPrivateKey: true)
                case "der": secret = try key.derRepresentation
                default: secret = try key.pemRepresentation
                }
                bytes = secret.copiedBytes(extraCapacity: 1)
                if format == "jwk" { bytes.append(UInt8(ascii: "\n")) }
                invocation.note(
                    encryption
                        ? "warning: this is the private encryption key, unencrypted: anyone who reads it can decrypt this "
                            + "device's operations."
                        : "warning: this is the private key, unencrypted: anyone who reads it can sign as this device.")
            } else {
                let passphrase =
                    try storePassphrase
                    ?? invocation.passphrases.passphrase(for: .protect(what: "the exported private key"))
                let pem = try key.encryptedPEMRepresentation(passphrase: passphrase, kdf: .default)
                encrypted = true
                if format == "der" {
                    let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
                    guard let der = Data(base64Encoded: body) else {
                        throw CLIFailure("internal error: the encrypted PEM could not be converted to DER")
                    }
                    bytes = Array(der)
                } else {
                    bytes = Array(pem.utf8)
                }
            }
        }
        defer { secureZero(&bytes) }

        if invocation.json {
            let data: Any
            switch format {
            case "jwk": data = JSONOutput.parse(Data(bytes)) ?? NSNull()
            case "der": data = Data(bytes).base64EncodedString()
            default: data = String(decoding: bytes, as: UTF8.self)
            }
            invocation.standardOutput.line(
                try JSONOutput.text([
                    "keyId": keyId, "format": format, "private": isPrivate, "encrypted": encrypted, "data": data,
                ]))
        } else {
            invocation.standardOutput.write(bytes: bytes)
        }
        return ExitCode.success
    }

    // MARK: key import

    static let importKey = Command(
        spec: CommandSpec(
            path: ["key", "import"],
            abstract: "Import a P-256 private key (PEM, private JWK or PKCS#8 DER) into the key store.",
            discussion:
                "Reads PKCS#8 PRIVATE KEY or ENCRYPTED PRIVATE KEY, SEC1 EC PRIVATE KEY (as made by 'openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256'), a private JWK, or PKCS#8 DER. An encrypted file is opened with the passphrase, which also protects the stored copy; an unencrypted one is stored under a passphrase unless --no-encryption. Prints the key id; --json prints {\"keyId\", \"publicJwk\"}.",
            options: [CommonOptions.store, CommonOptions.passphraseFile, noEncryption, CommonOptions.json],
            positionals: [PositionalSpec("FILE", help: "The private key file.")]
        )
    ) { invocation in
        let arguments = invocation.arguments
        let url = invocation.context.fileURL(arguments.positionals[0])
        let contents = try BoundedInput.read(url, what: "a key file")
        let text = String(decoding: contents, as: UTF8.self)
        let key: P256.Signing.PrivateKey
        var filePassphrase: SecureBytes?
        do {
            if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") {
                let passphrase = try invocation.passphrases.passphrase(for: .openFile(path: url.path))
                do {
                    key = try P256.Signing.PrivateKey(encryptedPEM: text, passphrase: passphrase)
                } catch let error as DeviceSigningError where error.code == .wrongPassphrase {
                    throw CLIFailure("the passphrase does not open \(url.path)")
                }
                filePassphrase = passphrase
            } else if text.contains("-----BEGIN PUBLIC KEY-----") && !text.contains("PRIVATE KEY-----") {
                throw CLIFailure("\(url.path) holds a public key; 'key import' needs the private key")
            } else if text.contains("-----BEGIN ") {
                key = try P256.Signing.PrivateKey(pemRepresentation: text)
            } else if text.drop(while: \.isWhitespace).hasPrefix("{") {
                guard (JSONOutput.parse(contents) as? [String: Any])?["d"] != nil else {
                    throw CLIFailure("\(url.path) holds a public JWK (no \"d\"); 'key import' needs the private key")
                }
                key = try P256.Signing.PrivateKey(jwkRepresentation: contents)
            } else {
                key = try P256.Signing.PrivateKey(derRepresentation: contents)
            }
        } catch let error as DeviceSigningError {
            throw CLIFailure("\(url.path) is not a P-256 private key this tool reads: \(error.reason)")
        }
        let unencrypted = arguments.flag("no-encryption")
        let passphrase =
            unencrypted
            ? nil
            : try filePassphrase
                ?? invocation.passphrases.passphrase(for: .protect(what: "the imported key"), allowsNoEncryption: true)
        let store = try KeyStoreAccess(invocation: invocation).open(create: true)
        let keyId = try store.save(
            key, metadata: KeyMetadata(publicKey: key.publicKey), passphrase: passphrase,
            allowUnencrypted: passphrase == nil, encryptionKey: P256.KeyAgreement.PrivateKey())
        if invocation.json {
            invocation.standardOutput.line(
                try JSONOutput.text(["keyId": keyId, "publicJwk": KeyDescription.jwkObject(key.publicKey.jwk)]))
        } else {
            invocation.standardOutput.line(keyId)
        }
        invocation.note(
            "Imported key \(keyId) into \(store.directory.path)\(passphrase == nil ? " (unencrypted)" : "").")
        return ExitCode.success
    }

    // MARK: key delete

    static let delete = Command(
        spec: CommandSpec(
            path: ["key", "delete"],
            abstract: "Delete a key from the key store.",
            discussion:
                "Takes the full key id (no prefix), since this cannot be undone. The backend is not told: rotate or deregister first if the key is registered. --json prints {\"keyId\", \"deleted\": true}.",
            options: [CommonOptions.store, CommonOptions.json],
            positionals: [PositionalSpec("KEYID", help: "The full key id (43 characters).")]
        )
    ) { invocation in
        let keyId = invocation.arguments.positionals[0]
        guard KeyStore.isValidKeyId(keyId) else {
            throw UsageError("'key delete' needs the full 43-character key id that 'fetchchannel key list' shows")
        }
        let store = try KeyStoreAccess(invocation: invocation).open(create: false)
        let metadata = try store.metadata(keyId)
        try store.delete(keyId)
        if invocation.json {
            invocation.standardOutput.line(try JSONOutput.text(["keyId": keyId, "deleted": true]))
        } else {
            invocation.standardOutput.line(keyId)
        }
        invocation.note("Deleted key \(keyId) from \(store.directory.path).")
        if let target = metadata.dispatchTargetId {
            invocation.note(
                "note: it was registered as dispatch target \(target)\(metadata.server.map { " on " + $0 } ?? ""); the backend still holds its public key."
            )
        }
        return ExitCode.success
    }
}

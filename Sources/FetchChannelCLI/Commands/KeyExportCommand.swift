import DeviceSigning
import Foundation

/// `fetchchannel key export`: a key's public key or, with `--private`, its private key.
struct KeyExportCommand: CLICommand {
    /// The export formats, as `--format` spells them.
    enum Format: String, CaseIterable, Sendable {
        case pem, jwk, der
    }

    static let format = Option(
        "format", "pem|jwk|der", help: "The output format (default: pem).", ValueParser<Format>.cases)
    static let privateKey = Flag("private", help: "Export the private key (encrypted unless --no-encryption).")
    static let noEncryption = Flag("no-encryption", help: "With --private: export the private key unencrypted.")
    static let encryptionKey = Flag(
        "encryption", help: "Export the key's encryption key instead of its signing key.")
    static let output = Option(
        "output", "FILE",
        help: "Write to FILE, a new file made 0600 from the start (refused if it exists), instead of standard "
            + "output.", .nonEmpty)

    static let spec = KeyOptions.spec(
        "export",
        abstract: "Export a key's public key (or, with --private, the private key) as PEM, JWK or DER.",
        discussion: "The public key by default (PEM: SubjectPublicKeyInfo; JWK; DER). With --private the private "
            + "key is exported as PKCS#8 ENCRYPTED PRIVATE KEY (PEM or DER) under the key's passphrase; only with "
            + "--no-encryption as plain PKCS#8 or a private JWK, which is never printed to a terminal. A private "
            + "key written to a regular file (> key.pem) makes that file 0600 before anything is written. DER is "
            + "binary: it is written only when standard output is not a terminal. With --encryption all of this "
            + "applies to the key's encryption key instead (the key the backend encrypts operations answers to; its "
            + "public JWK carries \"use\":\"enc\"). --output FILE writes what standard output would get to a new "
            + "file, 0600 from the start: no moment in which the shell's file (> key.pem, 0644 until the command "
            + "narrows it) can be opened by others. --json prints {\"keyId\", \"format\", \"private\", "
            + "\"encrypted\", \"data\"} (DER as base64).",
        options: [format, privateKey, noEncryption, encryptionKey, output, CommonOptions.passphraseFile],
        positionals: [KeyOptions.keyId]
    )

    let access: KeyStoreAccess
    private var console: Console { access.console }
    let key: KeyReference
    let format: Format
    let isPrivate: Bool
    let unencrypted: Bool
    /// The key's encryption key instead of its signing key.
    let encryption: Bool
    /// `--output`, as an absolute path.
    let outputPath: String?

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        format = try arguments[Self.format] ?? .pem
        isPrivate = arguments[Self.privateKey]
        unencrypted = arguments[Self.noEncryption]
        if unencrypted && !isPrivate {
            throw UsageError(
                .conflictingOptions,
                "--no-encryption applies to --private exports only; a public key is never encrypted")
        }
        if isPrivate && format == .jwk && !unencrypted {
            throw UsageError(
                .conflictingOptions,
                "a private JWK cannot be encrypted; use --format pem or der, or add --no-encryption")
        }
        encryption = arguments[Self.encryptionKey]
        if let path = try arguments[Self.output] {
            outputPath = try context.fileURL(path).path
        } else {
            outputPath = nil
        }
        access = try KeyStoreAccess(arguments, context: context)
        key = try KeyReference(parsing: arguments.positionals[0])
    }

    func run() async throws -> Int32 {
        guard let outputPath else { return try export(to: console) }
        // Created before anything is read or asked, so that a name in use costs nothing.
        let file = try OutputFile(creating: outputPath)
        let status: Int32
        do {
            status = try export(to: console.writingData(to: file.channel))
        } catch {
            file.discard()
            throw error
        }
        try file.finish()
        return status
    }

    /// The export, written to `console`'s data channel (standard output, or the `--output` file).
    private func export(to console: Console) throws -> Int32 {
        if format == .der && !console.json && console.standardOutput.isTerminal {
            throw CLIFailure(
                .refusedOutput,
                "refusing to write binary DER to a terminal; redirect standard output to a file (> key.der), or use "
                    + "--format pem")
        }
        let (store, keyId) = try access.openKey(key)
        let metadata = try store.metadata(keyId)
        try checkExportable(metadata)
        var (bytes, encrypted) =
            isPrivate
            ? try privateBytes(of: keyId, in: store, console: console) : (try publicBytes(of: metadata), false)
        defer { secureZero(&bytes) }
        if console.json, isPrivate, !encrypted {
            try printUnencryptedPrivateJSON(bytes, keyId: keyId, console: console)
        } else if console.json {
            let data: Any
            switch format {
            case .jwk: data = JSONOutput.parse(Data(bytes)) ?? NSNull()
            case .der: data = Data(bytes).base64EncodedString()
            case .pem: data = String(decoding: bytes, as: UTF8.self)
            }
            try console.printJSON([
                "keyId": keyId, "format": format.rawValue, "private": isPrivate, "encrypted": encrypted, "data": data,
            ])
        } else {
            console.standardOutput.write(bytes: bytes)
        }
        return ExitCode.success
    }

    /// The `--json` document of an unencrypted private key: the text `printJSON` makes of it, but
    /// without a `String` of the key, which could never be cleared. The other members are
    /// serialized as usual; the key's JSON value is written from its bytes into the one buffer of
    /// the document (its capacity reserved, so it never moves), first, as `data` sorts first.
    private func printUnencryptedPrivateJSON(_ secret: [UInt8], keyId: String, console: Console) throws {
        let members = try JSONOutput.text([
            "encrypted": false, "format": format.rawValue, "keyId": keyId, "private": true,
        ])
        let head = Array(#"{"data":"#.utf8)
        let tail = Array(("," + members.dropFirst() + "\n").utf8)
        let encodedDER = format == .der ? SecureBytes(secret).base64Encoded() : nil
        let quote = UInt8(ascii: "\"")
        var document: [UInt8] = []
        defer { secureZero(&document) }
        document.reserveCapacity(
            head.count + secret.count * JSONEscape.longestEscape + (encodedDER?.count ?? 0) + 2 + tail.count)
        document.append(contentsOf: head)
        switch format {
        case .jwk:  // the JWK's own compact JSON, without the line break of the plain export
            var object = secret[...]
            while object.last == UInt8(ascii: "\n") { object = object.dropLast() }
            document.append(contentsOf: object)
        case .pem:
            document.append(quote)
            for byte in secret { JSONEscape.appendEscaped(byte, to: &document) }
            document.append(quote)
        case .der:
            document.append(quote)
            encodedDER?.withUnsafeBytes { document.append(contentsOf: $0) }
            document.append(quote)
        }
        document.append(contentsOf: tail)
        console.standardOutput.write(bytes: document)
    }

    /// Refuses an encryption key the entry does not have, and a private key bound to a TPM.
    private func checkExportable(_ metadata: KeyMetadata) throws {
        let keyId = metadata.keyId
        if encryption && metadata.encryptionJWK == nil {
            throw CLIFailure(
                .keyStore,
                "key \(keyId) has no encryption key yet (it was made before encryption keys existed); it "
                    + "gets one at its next registration: 'fetchchannel register', or 'fetchchannel rotate "
                    + "--key \(keyId)' when it is registered already")
        }
        if isPrivate, metadata.isHardwareBound {
            let what = encryption ? "private encryption key" : "private key"
            throw CLIFailure(
                .hardwareBound,
                "key \(keyId) is bound to a TPM 2.0: its \(what) never leaves the TPM, so it cannot "
                    + "be exported; export the public key instead (omit --private)")
        }
    }

    /// The public key (of the signing or the encryption key) in the format asked for.
    private func publicBytes(of metadata: KeyMetadata) throws -> [UInt8] {
        let publicKey = try (encryption ? metadata.encryptionJWK ?? metadata.jwk : metadata.jwk).publicKey()
        switch format {
        case .jwk: return Array(((encryption ? publicKey.jwk.withUse("enc") : publicKey.jwk).jsonString + "\n").utf8)
        case .der: return Array(publicKey.derRepresentation)
        case .pem: return Array(publicKey.pemRepresentation.utf8)
        }
    }

    /// The private key in the format asked for, and whether it is encrypted. Output to a terminal
    /// is refused for an unencrypted key; a regular output file is made 0600 before anything is written.
    private func privateBytes(of keyId: String, in store: KeyStore, console: Console) throws -> ([UInt8], Bool) {
        if unencrypted && console.standardOutput.isTerminal {
            throw CLIFailure(
                .refusedOutput,
                "refusing to print an unencrypted private key to a terminal, where it stays in the "
                    + "scrollback; redirect standard output to a file (> key.pem, made 0600) or a program")
        }
        if let problem = console.standardOutput.restrictRegularFileToOwner() {
            throw CLIFailure(
                .refusedOutput, "cannot restrict the output file to its owner (\(problem)); nothing was written")
        }
        let (key, storePassphrase): (any ExportablePrivateKey, SecureBytes?)
        if encryption {
            let (encryptionKey, passphrase) = try access.loadEncryptionKey(keyId, from: store)
            guard let encryptionKey else { throw CLIFailure(.keyStore, "key \(keyId) has no encryption key") }
            (key, storePassphrase) = (encryptionKey, passphrase)
        } else {
            (key, storePassphrase) = try access.loadPrivateKey(keyId, from: store)
        }
        if unencrypted { return (try unencryptedBytes(of: key), false) }
        let passphrase =
            try storePassphrase ?? access.passphrases.passphrase(for: .protect(what: "the exported private key"))
        return (try encryptedBytes(of: key, passphrase: passphrase), true)
    }

    private func unencryptedBytes(of key: any ExportablePrivateKey) throws -> [UInt8] {
        let secret: SecureBytes
        switch format {
        case .jwk: secret = try key.jwkRepresentation(includingPrivateKey: true)
        case .der: secret = try key.derRepresentation
        case .pem: secret = try key.pemRepresentation
        }
        var bytes = secret.copiedBytes(extraCapacity: 1)
        if format == .jwk { bytes.append(UInt8(ascii: "\n")) }
        console.note(
            encryption
                ? "warning: this is the private encryption key, unencrypted: anyone who reads it can decrypt this "
                    + "device's operations."
                : "warning: this is the private key, unencrypted: anyone who reads it can sign as this device.")
        return bytes
    }

    /// PKCS#8 ENCRYPTED PRIVATE KEY, as PEM or as its DER body.
    private func encryptedBytes(of key: any ExportablePrivateKey, passphrase: SecureBytes) throws -> [UInt8] {
        let pem = try key.encryptedPEMRepresentation(passphrase: passphrase, kdf: .default)
        guard format == .der else { return Array(pem.utf8) }
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let der = Data(base64Encoded: body) else {
            throw CLIFailure(.internalError, "internal error: the encrypted PEM could not be converted to DER")
        }
        return Array(der)
    }
}

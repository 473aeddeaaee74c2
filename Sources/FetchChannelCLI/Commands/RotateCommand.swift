import DeviceSigning
import FetchChannel
import FetchChannelWire
import Foundation

/// `fetchchannel rotate`: a registered key replaced by a new one, the backend told with a request
/// signed by the old key.
struct RotateCommand: CLICommand {
    static let key = Option("key", "KEYID", help: "The registered key to replace.", required: true, .keyReference)

    static let spec = CommandSpec(
        path: ["rotate"],
        abstract: "Replace a registered key: new key, backend update signed with the old key, then delete the old key.",
        discussion: "Generates a new key (protected with the old key's passphrase), stores it with a copy of the "
            + "old key's encryption key (the registration keeps its encryption key; a key made before encryption "
            + "keys existed gets a new one), then PATCHes <server>\(DispatchTargetBody.path)/<id> with "
            + "{signatureKey: <new public JWK>, encryptionKey: <the encryption key>} carrying a Device-Signature made with the OLD key. Only when the "
            + "backend accepts (2xx) with an answer that names the same dispatch target is the registration moved "
            + "to the new key and the old key deleted. Anything else (a refusal, a redirect, which is never "
            + "followed, an answer for another target, no answer) keeps both keys and says which one the backend "
            + "may hold. Prints the new key id; --json prints {\"oldKeyId\", \"newKeyId\", \"dispatchTargetId\", "
            + "\"server\"}.",
        options: [key, CommonOptions.store, CommonOptions.passphraseFile, CommonOptions.json]
    )

    /// The registration being rotated, as the old key's entry records it.
    private struct Registration {
        /// The old key's entry.
        let metadata: KeyMetadata
        let targetId: String
        let server: BackendURL
        let trust: TLSTrust

        var oldKeyId: String { metadata.keyId }
    }

    let access: KeyStoreAccess
    private var console: Console { access.console }
    let key: KeyReference

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        access = try KeyStoreAccess(arguments, context: context)
        key = try arguments.required(Self.key)
    }

    func run() async throws -> Int32 {
        let (store, oldKeyId) = try access.openKey(key)
        let registration = try registration(of: oldKeyId, in: store)
        let (oldKey, passphrase) = try access.loadPrivateKey(oldKeyId, from: store)
        // 1. The new key is stored first, unregistered, so that it survives whatever happens next.
        let (newKeyId, newPublicJWK, encryptionJWK) = try storeNewKey(
            replacing: oldKey, of: registration, passphrase: passphrase, in: store)
        console.note(
            "Generated new key \(newKeyId); asking \(registration.server) to replace key \(oldKeyId) of dispatch "
                + "target \(registration.targetId)…")
        // 2. The backend update, signed with the old key.
        let body = DispatchTargetBody.rotation(signatureKey: newPublicJWK, encryptionKey: encryptionJWK)
        let answer = try await send(body, signedWith: oldKey, for: registration, newKeyId: newKeyId)
        let targetId = registration.targetId
        guard (200..<300).contains(answer.status), DispatchTargetBody.targetId(of: answer) == targetId else {
            // 3a. Anything but an acceptance that names this dispatch target: both keys stay.
            throw CLIFailure(
                .backend,
                Self.rotationNotConfirmed(answer, oldKeyId: oldKeyId, newKeyId: newKeyId, targetId: targetId))
        }
        // 3b. Accepted, for this target: the registration moves to the new key, then the old key goes.
        try store.updateMetadata(newKeyId) { $0.dispatchTargetId = targetId }
        try store.delete(oldKeyId)
        if console.json {
            try console.printJSON([
                "oldKeyId": oldKeyId, "newKeyId": newKeyId, "dispatchTargetId": targetId,
                "server": registration.server.description,
            ])
        } else {
            console.line(newKeyId)
        }
        console.note(
            "Rotated: dispatch target \(targetId) now verifies with key \(newKeyId); key \(oldKeyId) was deleted.")
        return ExitCode.success
    }

    /// The registration of the key asked for; a key that is not registered has nothing to rotate.
    private func registration(of oldKeyId: String, in store: KeyStore) throws -> Registration {
        let metadata = try store.metadata(oldKeyId)
        guard let targetId = metadata.dispatchTargetId, let serverText = metadata.server else {
            throw CLIFailure(
                .keyStore,
                "key \(oldKeyId) is not registered with a backend; there is nothing to rotate ('register' it first)")
        }
        let server: BackendURL
        do {
            server = try BackendURL(parsing: serverText)
        } catch {
            throw CLIFailure(.keyStore, "key \(oldKeyId) records an unusable server '\(serverText)': \(error)")
        }
        return Registration(
            metadata: metadata, targetId: targetId, server: server,
            trust: try BackendTrustOptions.stored(metadata))
    }

    /// A new key stored unregistered beside the old one, protected as it is, with a copy of its
    /// encryption key (the registration keeps its encryption key), or a new one when the old key
    /// has none. A TPM-bound key is replaced by a new TPM-bound key, never by a software one.
    /// Returns the new key's id and public JWK: the private key is released before an encryption
    /// key is made, because a TPM without a resource manager holds only a few keys at a time.
    private func storeNewKey(
        replacing oldKey: P256.Signing.PrivateKey, of registration: Registration, passphrase: SecureBytes?,
        in store: KeyStore
    ) throws -> (keyId: String, publicJWK: JWK, encryptionJWK: JWK?) {
        let (newKeyId, publicJWK) = try {
            let newKey =
                oldKey.isHardwareBound
                ? try P256.Signing.PrivateKey(generatingInTPM: access.tpm)
                : try P256.Signing.PrivateKey()
            let old = registration.metadata
            var newMetadata = KeyMetadata(publicKey: newKey.publicKey)
            newMetadata.deviceId = old.deviceId
            newMetadata.server = old.server
            newMetadata.serverCAFile = old.serverCAFile
            newMetadata.serverPins = old.serverPins
            let keyId = try store.save(
                newKey, metadata: newMetadata, passphrase: passphrase, allowUnencrypted: passphrase == nil)
            return (keyId, newKey.publicKey.jwk)
        }()
        var record = try store.copyEncryptionKey(from: registration.oldKeyId, to: newKeyId)
        if record.encryptionJWK == nil {
            // The old key was made before encryption keys existed: a rotation is this
            // registration's next one, so the new key gets its encryption key now.
            record = try store.addEncryptionKey(newKeyId, passphrase: passphrase, tpm: access.tpm)
        }
        return (newKeyId, publicJWK, record.encryptionJWK)
    }

    /// PATCHes the dispatch target with a Device-Signature of the old key. No answer at all leaves
    /// it unknown whether the backend took the new key: both keys are kept, and the failure says so.
    private func send(
        _ body: [String: Any], signedWith oldKey: P256.Signing.PrivateKey, for registration: Registration,
        newKeyId: String
    ) async throws -> BackendHTTPClient.Answer {
        let signature = try DeviceSignatureSigner(
            key: oldKey, dispatchTargetId: registration.targetId, clock: SystemWallClock()
        ).headerValue()
        let url = registration.server.appending(
            path: DispatchTargetBody.path + "/" + BackendURL.segment(registration.targetId))
        do {
            return try await BackendHTTPClient().send(
                "PATCH", url, json: body, headers: [DeviceSignatureSigner.headerName: signature],
                trust: registration.trust)
        } catch let failure as CLIFailure {
            let oldKeyId = registration.oldKeyId
            throw CLIFailure(
                .backend,
                "\(failure.message). Whether the backend took the new key is unknown, so both keys are kept: old "
                    + "\(oldKeyId) (still registered here) and new \(newKeyId) (unregistered). Run 'fetchchannel "
                    + "rotate --key \(oldKeyId)' again; if the backend answers \(WireErrorCode.invalidSignature), it "
                    + "holds the new key: then delete the old key and register the new one.")
        }
    }

    /// Why a rotation was not confirmed, which key the backend may hold, and what to do.
    static func rotationNotConfirmed(
        _ answer: BackendHTTPClient.Answer, oldKeyId: String, newKeyId: String,
        targetId: String
    ) -> String {
        let kept = "Both keys are kept: old \(oldKeyId) (still registered here) and new \(newKeyId) (unregistered)."
        let check =
            "Run 'fetchchannel rotate --key \(oldKeyId)' again; if the backend answers \(WireErrorCode.invalidSignature), it holds"
            + " the new key: then delete the old key and register the new one."
        switch answer.status {
        case 200..<300:
            return "the backend answered \(answer.summary), which does not confirm dispatch target \(targetId). "
                + "Whether it took the new key is unknown. \(kept) \(check)"
        case 300..<500:
            return "the backend did not take the new key: \(answer.summary). It most likely still holds the old key."
                + " \(kept) Delete the new key with 'fetchchannel key delete \(newKeyId)' if you do not retry."
        default:
            return "the backend refused the new key: \(answer.summary). A server error can come after the change was"
                + " made, so whether it took the new key is unknown. \(kept) \(check)"
        }
    }
}

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
            + "to the new key and the old key deleted. A refusal or a redirect (never followed) keeps both keys. "
            + "When the answer leaves it unknown whether the backend took the new key (no answer, a server error, "
            + "an answer that names no target), the backend is asked: a read of the device's pending operations "
            + "signed with the new key, then with the old one; the rotation completes if it accepts the new key "
            + "and refuses the old one. Otherwise both keys are kept and the error says which one the backend "
            + "holds, if that is known. Run again, rotate first asks whether the backend holds the new key of an "
            + "earlier rotation of this registration and, if so, completes that one. Prints the new key id; --json "
            + "prints {\"oldKeyId\", \"newKeyId\", \"dispatchTargetId\", \"server\"}.",
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
        // Held until the outcome is stored: two rotations of one key at once could both be taken
        // by the backend, leaving two new keys that record the same dispatch target.
        let claim = try store.claim(oldKeyId)
        defer { claim.release() }
        let registration = try registration(of: oldKeyId, in: store)
        let (oldKey, passphrase) = try access.loadPrivateKey(oldKeyId, from: store)
        // 0. An earlier rotation whose answer was lost may have taken effect.
        if let earlier = try await earlierNewKey(of: registration, oldKey: oldKey, passphrase: passphrase, in: store) {
            console.note(
                "An earlier rotation took effect: \(registration.server) verifies dispatch target "
                    + "\(registration.targetId) with key \(earlier), made by it, and no longer with key \(oldKeyId).")
            // That key, too, must not be registered or deleted by another command meanwhile.
            let earlierClaim = try store.claim(earlier)
            defer { earlierClaim.release() }
            return try complete(registration, newKeyId: earlier, in: store, claim: claim)
        }
        // 1. The new key is stored first, unregistered, so that it survives whatever happens next.
        let (newKeyId, newPublicJWK, encryptionJWK, newClaim) = try storeNewKey(
            replacing: oldKey, of: registration, passphrase: passphrase, in: store)
        defer { newClaim.release() }
        console.note(
            "Generated new key \(newKeyId); asking \(registration.server) to replace key \(oldKeyId) of dispatch "
                + "target \(registration.targetId)…")
        // 2. The backend update, signed with the old key. Until it is sent, nothing has changed at
        // the backend, so a failure to sign it (a TPM that does not answer) removes the new key,
        // as storeNewKey does.
        let body = DispatchTargetBody.rotation(signatureKey: newPublicJWK, encryptionKey: encryptionJWK)
        let oldKeySignature: String
        do {
            oldKeySignature = try DeviceSignatureSigner(
                key: oldKey, dispatchTargetId: registration.targetId, clock: access.context.wallClock
            ).headerValue()
        } catch {
            let cause = CLIFailure(
                .keyStore,
                "cannot sign the rotation request with key \(oldKeyId) (\(FetchChannelCLI.describe(error))). "
                    + "Nothing was sent, so key \(oldKeyId) stays registered as it was.")
            throw Self.unsent(cause, newKeyId: newKeyId, oldKeyId: oldKeyId) {
                try store.delete(newKeyId, claim: newClaim)
            }
        }
        let answer: BackendHTTPClient.Answer?
        let why: String
        do {
            let sent = try await send(body, signature: oldKeySignature, for: registration)
            (answer, why) = (sent, Self.unconfirmed(sent, targetId: registration.targetId))
        } catch let failure as CLIFailure {
            (answer, why) = (nil, failure.message)
        }
        if let answer, (200..<300).contains(answer.status),
            DispatchTargetBody.targetId(of: answer) == registration.targetId
        {
            // 3a. Accepted, for this target.
            return try complete(registration, newKeyId: newKeyId, in: store, claim: claim)
        }
        if let answer, (300..<500).contains(answer.status) {
            // 3b. Refused: the request changed nothing.
            let holder =
                DispatchTargetKeyProbe.isInvalidSignature(answer)
                ? "It does not verify dispatch target \(registration.targetId) with key \(oldKeyId) (it holds "
                    + "another key, or the target is gone)."
                : "It most likely still holds the old key."
            throw CLIFailure(
                .backend,
                "the backend did not take the new key: \(answer.summary). \(holder) "
                    + Self.bothKept(oldKeyId, newKeyId)
                    + " Delete the new key with 'fetchchannel key delete \(newKeyId)' if you do not retry.")
        }
        // 3c. Unknown: the backend is asked with each key; only a pair of answers (one accepted,
        // the other refused) says which it holds. Each question asks for the answer encrypted to
        // its key's encryption key: the new key's is the one the PATCH named; the old key's is its
        // registration's (none for a key registered before encryption keys existed).
        var accepted: (new: DispatchTargetKeyProbe.Acceptance, old: DispatchTargetKeyProbe.Acceptance)?
        var unasked = ""
        let signatures = (
            new: signature(ofKey: newKeyId, for: registration, passphrase: passphrase, in: store),
            old: DispatchTargetKeyProbe.signature(
                with: oldKey, targetId: registration.targetId, clock: access.context.wallClock)
        )
        switch (signatures.new, signatures.old, probe(of: registration)) {
        case (.success(let new), .success(let old), .success(let probe)):
            accepted = (
                await acceptance(asking: probe, signature: new, encryptionKeyOf: newKeyId, passphrase, store),
                await acceptance(
                    asking: probe, signature: old, encryptionKeyOf: registration.oldKeyId, passphrase, store)
            )
        case (.failure(let problem), _, _), (_, .failure(let problem), _), (_, _, .failure(let problem)):
            unasked = problem.text
        }
        switch accepted {
        case (.accepted, .refused)?:
            console.note("\(why); but the backend accepts the new key for the dispatch target and refuses the old one.")
            return try complete(registration, newKeyId: newKeyId, in: store, claim: claim)
        case (.refused, .accepted)?:
            // It may still take it: the change can be on its way (a PATCH still being processed).
            throw CLIFailure(
                .backend,
                "\(why). The backend verifies dispatch target \(registration.targetId) with the old key and refuses "
                    + "the new one: it has not taken the new key, so far. " + Self.bothKept(oldKeyId, newKeyId)
                    + " Run 'fetchchannel rotate --key \(oldKeyId)' again later: it first asks the backend whether it "
                    + "holds the new key. Delete the new key only once the backend refused it for good.")
        default:
            let asked =
                accepted.map { "Asking the backend did not tell (new key: \($0.new), old key: \($0.old))." }
                ?? "The backend could not be asked (\(unasked))."
            throw CLIFailure(
                .backend,
                "\(why). Whether the backend took the new key is unknown. \(asked) " + Self.bothKept(oldKeyId, newKeyId)
                    + " Run 'fetchchannel rotate --key \(oldKeyId)' again: it first asks the backend whether it holds "
                    + "the new key.")
        }
    }

    /// Moves the registration to `newKeyId` and deletes the old key; prints the new key id.
    ///
    /// Once the new key records the dispatch target, the rotation has happened: the backend holds
    /// the new key and the store says so. Deleting the old key is then only tidying up. When it
    /// fails, the rotation is still reported as done (exit 0), with a warning that names the old
    /// entry and how to delete it: an error would send the user to rotate again (a third key the
    /// backend refuses) or to delete the new key, the only one the backend accepts.
    private func complete(
        _ registration: Registration, newKeyId: String, in store: KeyStore, claim: KeyClaim
    ) throws -> Int32 {
        let (oldKeyId, targetId) = (registration.oldKeyId, registration.targetId)
        do {
            try store.updateMetadata(newKeyId) { $0.dispatchTargetId = targetId }
        } catch let error as DeviceSigningError where error.code == .keyNotFound {
            // Deleted meanwhile: nothing of this store can sign for the target any more.
            throw CLIFailure(
                .keyStore,
                "\(registration.server) now verifies dispatch target \(targetId) with key \(newKeyId), but that "
                    + "key is no longer in the store, and the backend no longer accepts key \(oldKeyId): register "
                    + "this device again with a new key.")
        } catch {
            // The backend holds the new key now: the store's own error ("nothing was changed",
            // say) would read as if the rotation had not happened, and the advice elsewhere to
            // delete an unconfirmed new key would delete the only key the backend accepts.
            throw CLIFailure(
                .keyStore,
                "\(registration.server) now verifies dispatch target \(targetId) with key \(newKeyId), but "
                    + "recording that with the key failed (\(FetchChannelCLI.describe(error))). Keep key \(newKeyId): "
                    + "it is the one the backend accepts. Once the store is mended, run 'fetchchannel rotate --key "
                    + "\(oldKeyId)' again: it finds that the backend holds the new key and records it.")
        }
        var oldKeyFate = "key \(oldKeyId) was deleted."
        do {
            try store.delete(oldKeyId, claim: claim)
        } catch {
            oldKeyFate =
                "key \(oldKeyId) could not be deleted (\(FetchChannelCLI.describe(error))). The backend no longer "
                + "verifies dispatch target \(targetId) with it: delete what is left of it with "
                + "'fetchchannel key delete \(oldKeyId)' once that is mended, and do not rotate it again."
            console.note("Warning: " + oldKeyFate)
        }
        if console.json {
            try console.printJSON([
                "oldKeyId": oldKeyId, "newKeyId": newKeyId, "dispatchTargetId": targetId,
                "server": registration.server.description,
            ])
        } else {
            console.line(newKeyId)
        }
        console.note("Rotated: dispatch target \(targetId) now verifies with key \(newKeyId); \(oldKeyFate)")
        return ExitCode.success
    }

    /// The new key of an earlier rotation of this registration, when the backend holds it: a key
    /// of the store for the same device and server that was never registered (an unconfirmed
    /// rotation leaves its new key so), or that records this very dispatch target (a rotation
    /// stopped between recording its new key and deleting the old one leaves two records naming
    /// the target, and the next rotation made a third key). The backend is asked only when there is such a key, and
    /// about each of them only when it refuses the old key; when it refuses all of them, the
    /// registration cannot be rotated from here and nothing more is made. Each question is
    /// signed before any decryption key is loaded, one key at a time, and asks for the answer
    /// encrypted to its own key's encryption key (a backend that holds the key holds that one).
    private func earlierNewKey(
        of registration: Registration, oldKey: P256.Signing.PrivateKey, passphrase: SecureBytes?,
        in store: KeyStore
    ) async throws -> String? {
        let candidates = try store.list().filter { candidate in
            candidate.keyId != registration.oldKeyId
                && (candidate.dispatchTargetId == nil || candidate.dispatchTargetId == registration.targetId)
                && candidate.deviceId != nil && candidate.deviceId == registration.metadata.deviceId
                && candidate.server.flatMap { try? BackendURL(parsing: $0) } == registration.server
        }
        guard !candidates.isEmpty,
            case .success(let oldSignature) = DispatchTargetKeyProbe.signature(
                with: oldKey, targetId: registration.targetId, clock: access.context.wallClock)
        else { return nil }
        let signatures = candidates.map { candidate in
            (candidate.keyId, signature(ofKey: candidate.keyId, for: registration, passphrase: passphrase, in: store))
        }
        guard case .success(let probe) = probe(of: registration),
            await acceptance(
                asking: probe, signature: oldSignature, encryptionKeyOf: registration.oldKeyId, passphrase, store)
                == .refused
        else { return nil }
        var unanswered: [String] = []
        for (keyId, signature) in signatures {
            switch signature {
            case .failure(let problem):
                unanswered.append("\(keyId) (\(problem.text))")
            case .success(let signature):
                switch await acceptance(
                    asking: probe, signature: signature, encryptionKeyOf: keyId, passphrase, store)
                {
                case .accepted: return keyId
                case .refused: continue
                case .unknown(let why): unanswered.append("\(keyId) (\(why))")
                }
            }
        }
        let refusal =
            "\(registration.server) refuses key \(registration.oldKeyId) for dispatch target \(registration.targetId)"
            + " (\(WireErrorCode.invalidSignature))"
        guard unanswered.isEmpty else {
            throw CLIFailure(
                .backend,
                "\(refusal), and it could not be asked about every key an earlier, unconfirmed rotation left: "
                    + unanswered.joined(separator: "; ") + ". Keep those keys and run 'fetchchannel rotate --key "
                    + "\(registration.oldKeyId)' again later.")
        }
        throw CLIFailure(
            .backend,
            "\(refusal) and every key an earlier, unconfirmed rotation left (\(candidates.map(\.keyId).joined(separator: ", ")))"
                + ": it verifies the target with a key this store does not have, or the target is gone, so the "
                + "registration cannot be rotated from here. Register a new key for the device instead.")
    }

    /// A question's Device-Signature made with the stored key `keyId`, which is loaded for it and
    /// released after (a TPM without a resource manager holds two keys at a time).
    private func signature(
        ofKey keyId: String, for registration: Registration, passphrase: SecureBytes?, in store: KeyStore
    ) -> Result<String, DispatchTargetKeyProbe.Problem> {
        let key: P256.Signing.PrivateKey
        do {
            // Made by rotate, it is protected as the old key is.
            key = try store.load(keyId, passphrase: passphrase, tpm: access.tpm)
        } catch {
            return .failure(.init("the key could not be loaded: \(error)"))
        }
        return DispatchTargetKeyProbe.signature(
            with: key, targetId: registration.targetId, clock: access.context.wallClock)
    }

    /// Asks the backend about this registration's keys; fails without a recorded device id.
    private func probe(of registration: Registration) -> Result<DispatchTargetKeyProbe, DispatchTargetKeyProbe.Problem>
    {
        guard let deviceId = registration.metadata.deviceId else {
            return .failure(.init("no device id is recorded with the key"))
        }
        return .success(
            DispatchTargetKeyProbe(
                server: registration.server, deviceId: deviceId, targetId: registration.targetId,
                trust: registration.trust))
    }

    /// Whether the backend accepts `signature`, made with the stored key `keyId`, asking for the
    /// answer encrypted to that key's encryption key (loaded for the question and released after),
    /// or in JSON when it has none. Unknown when that encryption key cannot be loaded: the answer is
    /// then not asked for in plain text instead.
    private func acceptance(
        asking probe: DispatchTargetKeyProbe, signature: String, encryptionKeyOf keyId: String,
        _ passphrase: SecureBytes?, _ store: KeyStore
    ) async -> DispatchTargetKeyProbe.Acceptance {
        let decryptionKey: P256.KeyAgreement.PrivateKey?
        do {
            decryptionKey = try store.loadEncryptionKey(keyId, passphrase: passphrase, tpm: access.tpm)
        } catch {
            return .unknown("the encryption key of \(keyId) could not be loaded: \(error)")
        }
        return await probe.acceptance(signature: signature, decryptionKey: decryptionKey)
    }

    private static func bothKept(_ oldKeyId: String, _ newKeyId: String) -> String {
        "Both keys are kept: old \(oldKeyId) (still registered here) and new \(newKeyId) (unregistered)."
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
            throw CLIFailure(
                .keyStore, "key \(oldKeyId) records an unusable server '\(BackendURL.shown(serverText))': \(error)")
        }
        return Registration(
            metadata: metadata, targetId: targetId, server: server,
            trust: try BackendTrustOptions.stored(metadata))
    }

    /// A new key stored unregistered beside the old one, protected as it is, with a copy of its
    /// encryption key (the registration keeps its encryption key), or a new one when the old key
    /// has none. A TPM-bound key is replaced by a new TPM-bound key, never by a software one.
    /// Returns the new key's id and public JWK, and its claim (taken before it is stored, so that
    /// no other command registers or deletes it while this one asks the backend to take it): the
    /// private key is released before an encryption key is made, because a TPM without a resource
    /// manager holds only a few keys at a time.
    private func storeNewKey(
        replacing oldKey: P256.Signing.PrivateKey, of registration: Registration, passphrase: SecureBytes?,
        in store: KeyStore
    ) throws -> (keyId: String, publicJWK: JWK, encryptionJWK: JWK?, claim: KeyClaim) {
        let (newKeyId, publicJWK, claim) = try { () throws -> (String, JWK, KeyClaim) in
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
            let claim = try store.claim(newKey.publicKey.jwkThumbprint)
            let keyId = try store.save(
                newKey, metadata: newMetadata, passphrase: passphrase, allowUnencrypted: passphrase == nil)
            return (keyId, newKey.publicKey.jwk, claim)
        }()
        do {
            var record = try store.copyEncryptionKey(from: registration.oldKeyId, to: newKeyId)
            if record.encryptionJWK == nil {
                // The old key was made before encryption keys existed: a rotation is this
                // registration's next one, so the new key gets its encryption key now.
                record = try store.addEncryptionKey(newKeyId, passphrase: passphrase, tpm: access.tpm)
            }
            return (newKeyId, publicJWK, record.encryptionJWK, claim)
        } catch {
            // Nothing was sent: a new key without its encryption key is of no use.
            defer { claim.release() }
            throw Self.unsent(error, newKeyId: newKeyId, oldKeyId: registration.oldKeyId) {
                try store.delete(newKeyId, claim: claim)
            }
        }
    }

    /// The error of a rotation that stopped before its request was sent, once `remove` has
    /// taken its new key out of the store again: left there, the next rotation would take it for
    /// the new key of an unconfirmed one and ask the backend about it. `cause` when the key is
    /// gone; otherwise an error that names the key left behind, since `cause` alone (a store's
    /// "nothing was changed") would not say it is there.
    static func unsent(
        _ cause: any Error, newKeyId: String, oldKeyId: String, remove: () throws -> Void
    ) -> any Error {
        do {
            try remove()
            return cause
        } catch {
            return CLIFailure(
                .keyStore,
                "the rotation stopped before anything was sent, but left its new key \(newKeyId) in the store, "
                    + "unregistered: removing it failed (\(FetchChannelCLI.describe(error))). Delete it with "
                    + "'fetchchannel key delete \(newKeyId)' before you rotate again. Key \(oldKeyId) stays "
                    + "registered. What stopped the rotation: \(FetchChannelCLI.describe(cause))")
        }
    }

    /// PATCHes the dispatch target with `signature`, the old key's Device-Signature; throws
    /// `CLIFailure` when there is no answer.
    private func send(
        _ body: [String: Any], signature: String, for registration: Registration
    ) async throws -> BackendHTTPClient.Answer {
        let url = DispatchTargetBody.url(of: registration.targetId, at: registration.server)
        return try await BackendHTTPClient().send(
            "PATCH", url, json: body, headers: [DeviceSignatureSigner.headerName: signature],
            trust: registration.trust)
    }

    /// Why a 2xx that names no target, or a server error, leaves the rotation unconfirmed, as the
    /// start of a sentence.
    static func unconfirmed(_ answer: BackendHTTPClient.Answer, targetId: String) -> String {
        switch answer.status {
        case 200..<300: "the backend answered \(answer.summary), which does not confirm dispatch target \(targetId)"
        default: "the backend answered \(answer.summary); a server error can come after the change was made"
        }
    }
}

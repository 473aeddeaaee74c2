import DeviceSigning
import FetchChannelWire
import Foundation

/// `fetchchannel register` and `fetchchannel rotate`: a key's dispatch target on a backend.
enum RegistrationCommands {
    static let all = [register, rotate]

    static let targetsPath = WirePaths.basePath + WirePaths.dispatchTargets

    /// This machine's host name from gethostname(2) (no DNS lookup, unlike ProcessInfo.hostName).
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "this device" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "this device" : name
    }

    // MARK: register

    static let register = Command(
        spec: CommandSpec(
            path: ["register"],
            abstract: "Register a key with a backend as a dispatch target and store the target id with the key.",
            discussion: "POSTs {username, deviceId, name, target, dispatcher, signatureKey: <public JWK>, "
                + "encryptionKey: <the key's encryption key, public JWK with \"use\":\"enc\">} to "
                + "<server>\(targetsPath) and stores the returned id, the server and the device id "
                + "in the key's metadata. When another key of the store is already registered for the same device at "
                + "the same backend, the request carries a Device-Signature made with that key (the backend opens a "
                + "further dispatch target of a known device only to the device itself), and that key's passphrase is "
                + "needed; otherwise no passphrase is needed: only public keys are sent. A key made before encryption "
                + "keys existed first gets its encryption key (stored before the request is sent, protected as the key "
                + "is: its passphrase is needed). The server must be https:// (http:// only on loopback). For an "
                + "https:// server, --ca-file and --pin say how its certificate is checked (instead of, or besides, the "
                + "system CAs); the check happens on this request, a failure exits 1 and says why, and the trust is "
                + "stored with the registration for fetch, rotate and redeem. Prints the dispatch target id; --json "
                + "prints {\"keyId\", \"dispatchTargetId\", \"extId\", \"server\", \"deviceId\"}.",
            options: [
                .value("server", "URL", help: "The backend's base URL, e.g. https://backend.example.", required: true),
                .value("device-id", "ID", help: "This device's id at the backend.", required: true),
                .value(
                    "key", "KEYID", help: "The key to register (its id or at least 4 characters of it).", required: true
                ),
                .value("username", "U", help: "The user the device belongs to (default: $USER, else \"user\")."),
                .value("name", "N", help: "A name for the device (default: \"fetchchannel on <host name>\")."),
                CommonOptions.store.spec,
                CommonOptions.passphraseFile.spec,
                CommonOptions.json.spec,
            ] + BackendTrustOptions.all.map(\.spec)
        )
    ) { invocation in
        let arguments = invocation.arguments
        let server = try BackendURL(parsing: arguments.value("server") ?? "")
        let trust = try BackendTrustOptions.parse(invocation, server: server)
        guard let deviceId = try arguments.nonEmpty("device-id"), deviceId.utf8.count <= 256 else {
            throw UsageError("--device-id needs a non-empty id of at most 256 bytes")
        }
        let username =
            try arguments.nonEmpty("username") ?? invocation.context.environment["USER"].flatMap {
                $0.isEmpty ? nil : $0
            } ?? "user"
        let name = try arguments.nonEmpty("name") ?? "fetchchannel on \(hostName())"
        let access = KeyStoreAccess(invocation: invocation)
        let store = try access.open(create: false)
        let keyId = try access.resolve(arguments.value("key") ?? "", in: store)
        let metadata = try store.metadata(keyId)
        if let existing = metadata.dispatchTargetId {
            throw CLIFailure(
                "key \(keyId) is already registered as dispatch target \(existing)\(metadata.server.map { " on " + $0 } ?? ""); generate a new key for another registration, or 'rotate' to replace this one"
            )
        }

        // A key made before encryption keys existed gets one now, stored before anything is sent.
        let encryptionJWK =
            try metadata.encryptionJWK
            ?? access.withPassphraseIfNeeded(keyId) {
                try store.addEncryptionKey(keyId, passphrase: $0, tpm: access.tpm)
            }.0.encryptionJWK
        var body: [String: Any] = [
            "username": username, "deviceId": deviceId, "name": name,
            "target": deviceId, "dispatcher": "fetchchannel",
            "signatureKey": KeyDescription.jwkObject(metadata.jwk),
        ]
        if let encryptionJWK { body["encryptionKey"] = KeyDescription.jwkObject(encryptionJWK) }
        var headers: [String: String] = [:]
        if let sibling = try registeredSibling(of: keyId, deviceId: deviceId, server: server, in: store),
            let siblingTarget = sibling.dispatchTargetId
        {
            // The backend opens a further dispatch target of a known device only to that device.
            invocation.note(
                "Signing the registration with key \(sibling.keyId), already dispatch target \(siblingTarget) of device \(deviceId)…"
            )
            let (siblingKey, _) = try access.loadPrivateKey(sibling.keyId, from: store)
            let signer = try DeviceSignatureSigner(
                key: siblingKey, dispatchTargetId: siblingTarget, clock: SystemWallClock())
            headers[DeviceSignatureSigner.headerName] = try signer.headerValue()
        }
        invocation.note("Registering key \(keyId) for device \(deviceId) with \(server)…")
        let answer = try await BackendHTTPClient().send(
            "POST", server.appending(path: targetsPath), json: body, headers: headers,
            trust: trust.trust)
        guard answer.status == 201 || answer.status == 200 else {
            throw CLIFailure("the backend refused the registration: \(answer.summary)")
        }
        guard let object = answer.object, let targetId = object["id"] as? String else {
            throw CLIFailure(
                "the backend accepted the registration but its answer has no dispatch target id: \(answer.summary)")
        }
        // The id becomes the JWS kid of every request: check it with the signer's own rules.
        do {
            _ = try DeviceSignatureSigner(
                key: P256.Signing.PrivateKey(), dispatchTargetId: targetId, clock: SystemWallClock())
        } catch let error as DeviceSigningError {
            throw CLIFailure("the backend returned an unusable dispatch target id: \(error.reason)")
        }
        let extId = object["extId"] as? String
        try store.updateMetadata(keyId) { record in
            record.dispatchTargetId = targetId
            record.server = server.description
            record.deviceId = deviceId
            record.serverCAFile = trust.caFile
            record.serverPins = trust.pins.isEmpty ? nil : trust.pins
        }
        if invocation.json {
            invocation.standardOutput.line(
                try JSONOutput.text([
                    "keyId": keyId, "dispatchTargetId": targetId, "extId": JSONOutput.orNull(extId),
                    "server": server.description, "deviceId": deviceId,
                ]))
        } else {
            invocation.standardOutput.line(targetId)
        }
        invocation.note("Registered: dispatch target \(targetId) on \(server), stored with key \(keyId).")
        return ExitCode.success
    }

    /// Another key of the store registered for the same device at the same backend, if any: its
    /// signature lets the backend add a further dispatch target to a device it already knows.
    static func registeredSibling(
        of keyId: String, deviceId: String, server: BackendURL,
        in store: KeyStore
    ) throws -> KeyMetadata? {
        try store.list().first { metadata in
            metadata.keyId != keyId && metadata.dispatchTargetId != nil && metadata.deviceId == deviceId
                && metadata.server.flatMap { try? BackendURL(parsing: $0) } == server
        }
    }

    // MARK: rotate

    static let rotate = Command(
        spec: CommandSpec(
            path: ["rotate"],
            abstract:
                "Replace a registered key: new key, backend update signed with the old key, then delete the old key.",
            discussion: "Generates a new key (protected with the old key's passphrase), stores it with a copy of the "
                + "old key's encryption key (the registration keeps its encryption key), then PATCHes "
                + "<server>\(targetsPath)/<id> with {signatureKey: <new public JWK>, encryptionKey: "
                + "<the unchanged encryption key>} carrying a Device-Signature made with the OLD key. Only when the "
                + "backend accepts (2xx) with an answer that names the same dispatch target is the registration moved "
                + "to the new key and the old key deleted. Anything else (a refusal, a redirect, which is never "
                + "followed, an answer for another target, no answer) keeps both keys and says which one the backend "
                + "may hold. Prints the new key id; --json prints {\"oldKeyId\", \"newKeyId\", \"dispatchTargetId\", "
                + "\"server\"}.",
            options: [
                .value("key", "KEYID", help: "The registered key to replace.", required: true),
                CommonOptions.store.spec,
                CommonOptions.passphraseFile.spec,
                CommonOptions.json.spec,
            ]
        )
    ) { invocation in
        let access = KeyStoreAccess(invocation: invocation)
        let store = try access.open(create: false)
        let oldKeyId = try access.resolve(invocation.arguments.value("key") ?? "", in: store)
        let oldMetadata = try store.metadata(oldKeyId)
        guard let targetId = oldMetadata.dispatchTargetId, let serverText = oldMetadata.server else {
            throw CLIFailure(
                "key \(oldKeyId) is not registered with a backend; there is nothing to rotate ('register' it first)")
        }
        let server: BackendURL
        do {
            server = try BackendURL(parsing: serverText)
        } catch {
            throw CLIFailure("key \(oldKeyId) records an unusable server '\(serverText)': \(error)")
        }
        let trust = try BackendTrustOptions.stored(oldMetadata)
        let (oldKey, passphrase) = try access.loadPrivateKey(oldKeyId, from: store)

        // 1. The new key is stored first, unregistered, so that it survives whatever happens next.
        // A TPM-bound key is replaced by a new TPM-bound key, never by a software one.
        let newKey =
            oldKey.isHardwareBound
            ? try P256.Signing.PrivateKey(generatingInTPM: access.tpm)
            : try P256.Signing.PrivateKey()
        var newMetadata = KeyMetadata(publicKey: newKey.publicKey)
        newMetadata.deviceId = oldMetadata.deviceId
        newMetadata.server = oldMetadata.server
        newMetadata.serverCAFile = oldMetadata.serverCAFile
        newMetadata.serverPins = oldMetadata.serverPins
        let newKeyId = try store.save(
            newKey, metadata: newMetadata, passphrase: passphrase, allowUnencrypted: passphrase == nil)
        // The registration keeps its encryption key: the new entry gets a copy of it.
        let encryptionJWK = try store.copyEncryptionKey(from: oldKeyId, to: newKeyId).encryptionJWK
        invocation.note(
            "Generated new key \(newKeyId); asking \(server) to replace key \(oldKeyId) of dispatch target \(targetId)…"
        )

        // 2. The backend update, signed with the old key.
        let signature = try DeviceSignatureSigner(key: oldKey, dispatchTargetId: targetId, clock: SystemWallClock())
            .headerValue()
        let url = server.appending(path: targetsPath + "/" + BackendURL.segment(targetId))
        let answer: BackendHTTPClient.Answer
        do {
            var body: [String: Any] = ["signatureKey": KeyDescription.jwkObject(newKey.publicKey.jwk)]
            if let encryptionJWK { body["encryptionKey"] = KeyDescription.jwkObject(encryptionJWK) }
            answer = try await BackendHTTPClient().send(
                "PATCH", url, json: body,
                headers: [DeviceSignatureSigner.headerName: signature], trust: trust)
        } catch let failure as CLIFailure {
            throw CLIFailure(
                "\(failure.message). Whether the backend took the new key is unknown, so both keys are kept: old \(oldKeyId) (still registered here) and new \(newKeyId) (unregistered). Run 'fetchchannel rotate --key \(oldKeyId)' again; if the backend answers \(WireErrorCode.invalidSignature), it holds the new key: then delete the old key and register the new one."
            )
        }
        guard (200..<300).contains(answer.status), answer.object?["id"] as? String == targetId else {
            // 3a. Anything but an acceptance that names this dispatch target: both keys stay.
            throw CLIFailure(rotationNotConfirmed(answer, oldKeyId: oldKeyId, newKeyId: newKeyId, targetId: targetId))
        }
        // 3b. Accepted, for this target: the registration moves to the new key, then the old key goes.
        try store.updateMetadata(newKeyId) { $0.dispatchTargetId = targetId }
        try store.delete(oldKeyId)
        if invocation.json {
            invocation.standardOutput.line(
                try JSONOutput.text([
                    "oldKeyId": oldKeyId, "newKeyId": newKeyId, "dispatchTargetId": targetId,
                    "server": server.description,
                ]))
        } else {
            invocation.standardOutput.line(newKeyId)
        }
        invocation.note(
            "Rotated: dispatch target \(targetId) now verifies with key \(newKeyId); key \(oldKeyId) was deleted.")
        return ExitCode.success
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

import DeviceSigning
import FetchChannel
import FetchChannelWire
import Foundation

/// `fetchchannel register`: a key's dispatch target on a backend.
struct RegisterCommand: CLICommand {
    static let server = Option(
        "server", "URL", help: "The backend's base URL, e.g. https://backend.example.", required: true, .backendURL)
    static let key = Option(
        "key", "KEYID", help: "The key to register (its id or at least 4 characters of it).", required: true,
        .keyReference)

    static let spec = CommandSpec(
        path: ["register"],
        abstract: "Register a key with a backend as a dispatch target and store the target id with the key.",
        discussion: "POSTs {username, deviceId, name, target, dispatcher, signatureKey: <public JWK>, "
            + "encryptionKey: <the key's encryption key, public JWK with \"use\":\"enc\">} to "
            + "<server>\(DispatchTargetBody.path) and stores the returned id, the server and the device id "
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
            server, RegisteredDevice.id, key, RegisteredDevice.username, RegisteredDevice.name, CommonOptions.store,
            CommonOptions.passphraseFile,
            CommonOptions.json,
        ] + BackendTrustOptions.all
    )

    let backend: BackendOptions
    private var server: BackendURL { backend.server }
    let device: RegisteredDevice
    private var deviceId: String { device.id }
    let access: KeyStoreAccess
    private var console: Console { access.console }
    let key: KeyReference

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        backend = try BackendOptions(arguments, server: Self.server, context: context)
        device = try RegisteredDevice(arguments, context: context)
        access = try KeyStoreAccess(arguments, context: context)
        key = try arguments.required(Self.key)
    }

    func run() async throws -> Int32 {
        let (store, keyId) = try access.openKey(key)
        // Held until the registration is stored: a second register (or a rotate) of this key at
        // once is refused before it sends anything.
        let claim = try store.claim(keyId)
        defer { claim.release() }
        let metadata = try store.metadata(keyId)
        if let existing = metadata.dispatchTargetId {
            let server = metadata.server.map { " on " + BackendURL.shown($0) } ?? ""
            throw CLIFailure(
                .keyStore,
                "key \(keyId) is already registered as dispatch target \(existing)\(server); "
                    + "generate a new key for another registration, or 'rotate' to replace this one")
        }
        // A key made before encryption keys existed gets one now, stored before anything is sent.
        let encryptionJWK =
            try metadata.encryptionJWK
            ?? access.withPassphraseIfNeeded(keyId) {
                try store.addEncryptionKey(keyId, passphrase: $0, tpm: access.tpm)
            }.0.encryptionJWK
        let body = DispatchTargetBody.registration(
            username: device.username, deviceId: deviceId, name: device.name, signatureKey: metadata.jwk,
            encryptionKey: encryptionJWK)
        let headers = try siblingSignature(of: keyId, in: store)
        console.note("Registering key \(keyId) for device \(deviceId) with \(server)…")
        let (targetId, extId) = try await send(body, headers: headers)
        do {
            try store.updateMetadata(keyId) { record in
                // Checked again under the store's lock, although the claim keeps another register
                // of this key out: a file system whose flock does nothing (some network ones) would
                // let one finish while this one waited for the backend (with the same answer, if the
                // backend gives one key one dispatch target: then there is nothing to undo).
                if let recorded = record.dispatchTargetId, recorded != targetId {
                    throw RegisteredMeanwhile(dispatchTargetId: recorded)
                }
                record.dispatchTargetId = targetId
                record.server = server.description
                record.deviceId = deviceId
                record.serverCAFile = backend.caFile
                record.serverPins = backend.pins.isEmpty ? nil : backend.pins
            }
        } catch {
            // The backend holds the registration now: its id is what the operator needs.
            throw CLIFailure(
                .keyStore,
                "\(server) registered key \(keyId) as dispatch target \(targetId) of device \(deviceId), but "
                    + "storing that with the key failed (\(error)); this store cannot sign for that dispatch "
                    + "target until it is recorded. Have the backend remove dispatch target \(targetId), or keep "
                    + "its id to record it.")
        }
        if console.json {
            try console.printJSON([
                "keyId": keyId, "dispatchTargetId": targetId, "extId": JSONOutput.orNull(extId),
                "server": server.description, "deviceId": deviceId,
            ])
        } else {
            console.line(PrintableText.oneLine(targetId))  // checked by the signer already; shown safely all the same
        }
        console.note("Registered: dispatch target \(targetId) on \(server), stored with key \(keyId).")
        return ExitCode.success
    }

    /// The key was registered by another command while this one waited for the backend.
    private struct RegisteredMeanwhile: Error, CustomStringConvertible {
        let dispatchTargetId: String
        var description: String {
            "another register of this key finished first and recorded dispatch target \(dispatchTargetId), "
                + "which the key keeps"
        }
    }

    /// The Device-Signature header of a sibling key (another key of the store registered for the
    /// same device at the same backend), if there is one: the backend opens a further dispatch
    /// target of a known device only to that device.
    private func siblingSignature(of keyId: String, in store: KeyStore) throws -> [String: String] {
        guard let sibling = try Self.registeredSibling(of: keyId, deviceId: deviceId, server: server, in: store),
            let siblingTarget = sibling.dispatchTargetId
        else { return [:] }
        // The sibling's fresh signature travels only under the trust it was registered with: a
        // command line without its pins or CA file would send it over a connection checked less.
        let siblingTrust = try BackendTrustOptions.stored(sibling)
        guard Self.checksAtLeast(backend.trust, as: siblingTrust) else {
            throw CLIFailure(
                .backend,
                "key \(sibling.keyId), which must sign this registration, is registered with \(server) under "
                    + "\(siblingTrust); this command trusts \(backend.trust). Give its --ca-file and its pins (all or some of them)."
            )
        }
        console.note(
            "Signing the registration with key \(sibling.keyId), already dispatch target \(siblingTarget) of device "
                + "\(deviceId)…")
        let (siblingKey, _) = try access.loadPrivateKey(sibling.keyId, from: store)
        let signer = try DeviceSignatureSigner(
            key: siblingKey, dispatchTargetId: siblingTarget, clock: access.context.wallClock)
        return [DeviceSignatureSigner.headerName: try signer.headerValue()]
    }

    /// Whether a connection checked with `trust` is checked at least as `reference` checks one:
    /// the same anchors, and pins that `reference` also accepts (any, in any order, when it has
    /// none; else a non-empty part of its own).
    static func checksAtLeast(_ trust: TLSTrust, as reference: TLSTrust) -> Bool {
        guard trust.anchors == reference.anchors else { return false }
        if reference.pins.isEmpty { return true }
        return !trust.pins.isEmpty && Set(trust.pins).isSubset(of: Set(reference.pins))
    }

    /// POSTs the registration; returns the dispatch target id (checked with the signer's own
    /// rules, as it becomes the JWS kid of every request) and the external id.
    private func send(_ body: [String: Any], headers: [String: String]) async throws -> (String, String?) {
        let answer = try await BackendHTTPClient().send(
            "POST", server.appending(path: DispatchTargetBody.path), json: body, headers: headers, trust: backend.trust)
        guard answer.status == 201 || answer.status == 200 else {
            throw CLIFailure(.backend, "the backend refused the registration: \(answer.summary)")
        }
        guard let targetId = DispatchTargetBody.targetId(of: answer) else {
            throw CLIFailure(
                .backend,
                "the backend accepted the registration but its answer has no dispatch target id: \(answer.summary)")
        }
        if let problem = DeviceSignatureLimits.dispatchTargetIdProblem(targetId) {
            throw CLIFailure(.backend, "the backend returned an unusable dispatch target id: \(problem)")
        }
        return (targetId, DispatchTargetBody.extId(of: answer))
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
}

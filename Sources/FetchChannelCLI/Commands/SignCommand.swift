import DeviceSigning
import Foundation

/// `fetchchannel sign`: a Device-Signature header value made with a stored key.
struct SignCommand: CLICommand {
    static let key = Option("key", "KEYID", help: "The signing key.", required: true, .keyReference)
    static let dispatchTarget = Option(
        "dispatch-target", "ID",
        help: "The dispatch target id (the JWS kid); default: the one the key was registered as.", .nonEmpty)
    static let creationTime = Option(
        "at", "EPOCH_MILLIS", help: "The creation time in milliseconds since 1970 (default: now).",
        .integer(in: Int64.min...Int64.max))
    static let requestId = Option(
        "request-id", "ID", help: "The request id, 1 to 64 characters (default: a random UUID). Never reuse one.",
        ValueParser.nonEmpty.map { id, _ throws(UsageError) in
            guard id.utf16.count <= DeviceSignatureLimits.maximumRequestIdLength else {
                throw UsageError(
                    .invalidValue,
                    "--request-id must be 1 to \(DeviceSignatureLimits.maximumRequestIdLength) characters; "
                        + "the backend refuses longer ones")
            }
            return id
        })

    static let spec = CommandSpec(
        path: ["sign"],
        abstract: "Print a Device-Signature header value (a compact ES256 JWS) made with a stored key.",
        discussion:
            "Protected header {\"alg\":\"ES256\",\"kid\":<dispatch target>,\"typ\":\"JWT\"}, payload {\"dispatchTargetId\",\"requestId\",\"creationTimeInEpochMillis\"}. The request id is a fresh random UUID and the creation time is now, unless given. --json prints {\"deviceSignature\", \"dispatchTargetId\", \"requestId\", \"creationTimeInEpochMillis\"}.",
        options: [
            key, dispatchTarget, creationTime, requestId, CommonOptions.store, CommonOptions.passphraseFile,
            CommonOptions.json,
        ]
    )

    let access: KeyStoreAccess
    private var console: Console { access.console }
    let key: KeyReference
    let dispatchTarget: String?
    /// `--at`; without it the time is read once the key is open (``run()``).
    let creationTime: Int64?
    let requestId: String

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        creationTime = try arguments[Self.creationTime]
        requestId = try arguments[Self.requestId] ?? DeviceSignatureSigner.randomRequestId()
        access = try KeyStoreAccess(arguments, context: context)
        key = try arguments.required(Self.key)
        dispatchTarget = try arguments[Self.dispatchTarget]
        // Usage errors the arguments alone reveal, before the store is opened or a key decrypted.
        if let dispatchTarget, let problem = DeviceSignatureLimits.dispatchTargetIdProblem(dispatchTarget) {
            throw UsageError(.invalidValue, "invalid value for '--dispatch-target': \(problem)")
        }
        if let problem = DeviceSignatureLimits.requestIdProblem(requestId) {
            throw UsageError(.invalidValue, "invalid value for '--request-id': \(problem)")
        }
    }

    func run() async throws -> Int32 {
        let (store, keyId) = try access.openKey(key)
        let target: String
        if let dispatchTarget {
            target = dispatchTarget
        } else if let registered = try store.metadata(keyId).dispatchTargetId {
            target = registered
        } else {
            throw UsageError(
                .missingOption, "key \(keyId) is not registered, so give the dispatch target with --dispatch-target ID")
        }
        let signingKey = try access.loadPrivateKey(keyId, from: store).0
        // "Now" is when the signature is made: opening the key may wait at a passphrase prompt or
        // for a TPM, and a time read before that could already be stale at the backend.
        let created = creationTime ?? access.context.wallClock.nowMillis()
        let value = try signature(with: signingKey, target: target, creationTime: created, of: keyId)
        if console.json {
            try console.printJSON([
                "deviceSignature": value, "dispatchTargetId": target, "requestId": requestId,
                "creationTimeInEpochMillis": created,
            ])
        } else {
            console.line(value)
        }
        return ExitCode.success
    }

    /// The header value; a dispatch target or request id the signer refuses is a usage error when
    /// the command line gave it, and the store's fault when the key's registration holds it.
    private func signature(
        with key: P256.Signing.PrivateKey, target: String, creationTime: Int64, of keyId: String
    ) throws -> String {
        let signer: DeviceSignatureSigner
        do {
            signer = try DeviceSignatureSigner(key: key, dispatchTargetId: target, clock: access.context.wallClock)
        } catch let error as DeviceSigningError where error.code == .invalidDispatchTargetId {
            guard dispatchTarget == nil else {
                throw UsageError(.invalidValue, "invalid value for '--dispatch-target': \(error.reason)")
            }
            throw CLIFailure(
                .keyStore,
                "key \(keyId) is registered with a dispatch target id that cannot be signed for: \(error.reason) "
                    + "Register the key again, or give the dispatch target with --dispatch-target ID.")
        }
        do {
            return try signer.headerValue(requestId: requestId, creationTimeInEpochMillis: creationTime)
        } catch let error as DeviceSigningError where error.code == .invalidRequestId {
            throw UsageError(.invalidValue, "invalid value for '--request-id': \(error.reason)")
        }
    }
}

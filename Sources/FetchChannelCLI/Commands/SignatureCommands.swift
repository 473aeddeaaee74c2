import DeviceSigning
import Foundation

/// `fetchchannel sign` and `fetchchannel verify`: Device-Signature values and ES256 JWS.
enum SignatureCommands {
    static let all = [sign, verify]

    // MARK: sign

    static let sign = Command(
        spec: CommandSpec(
            path: ["sign"],
            abstract: "Print a Device-Signature header value (a compact ES256 JWS) made with a stored key.",
            discussion:
                "Protected header {\"alg\":\"ES256\",\"kid\":<dispatch target>,\"typ\":\"JWT\"}, payload {\"dispatchTargetId\",\"requestId\",\"creationTimeInEpochMillis\"}. The request id is a fresh random UUID and the creation time is now, unless given. --json prints {\"deviceSignature\", \"dispatchTargetId\", \"requestId\", \"creationTimeInEpochMillis\"}.",
            options: [
                .value("key", "KEYID", help: "The signing key.", required: true),
                .value(
                    "dispatch-target", "ID",
                    help: "The dispatch target id (the JWS kid); default: the one the key was registered as."),
                .value("at", "EPOCH_MILLIS", help: "The creation time in milliseconds since 1970 (default: now)."),
                .value(
                    "request-id", "ID",
                    help: "The request id, 1 to 64 characters (default: a random UUID). Never reuse one."),
                CommonOptions.store.spec,
                CommonOptions.passphraseFile.spec,
                CommonOptions.json.spec,
            ]
        )
    ) { invocation in
        let arguments = invocation.arguments
        let creationTime = try arguments.integer("at", in: Int64.min...Int64.max) ?? SystemWallClock().nowMillis()
        let requestId = try arguments.nonEmpty("request-id") ?? DeviceSignatureSigner.randomRequestId()
        guard requestId.utf16.count <= DeviceSignatureLimits.maximumRequestIdLength else {
            throw UsageError(
                "--request-id must be 1 to \(DeviceSignatureLimits.maximumRequestIdLength) characters; the backend refuses longer ones"
            )
        }
        let access = KeyStoreAccess(invocation: invocation)
        let store = try access.open(create: false)
        let keyId = try access.resolve(arguments.value("key") ?? "", in: store)
        let target: String
        if let given = try arguments.nonEmpty("dispatch-target") {
            target = given
        } else if let registered = try store.metadata(keyId).dispatchTargetId {
            target = registered
        } else {
            throw UsageError("key \(keyId) is not registered, so give the dispatch target with --dispatch-target ID")
        }
        let (key, _) = try access.loadPrivateKey(keyId, from: store)
        let signer: DeviceSignatureSigner
        do {
            signer = try DeviceSignatureSigner(key: key, dispatchTargetId: target, clock: SystemWallClock())
        } catch let error as DeviceSigningError where error.code == .invalidDispatchTargetId {
            throw UsageError("invalid value for '--dispatch-target': \(error.reason)")
        }
        let value: String
        do {
            value = try signer.headerValue(requestId: requestId, creationTimeInEpochMillis: creationTime)
        } catch let error as DeviceSigningError where error.code == .invalidRequestId {
            throw UsageError("invalid value for '--request-id': \(error.reason)")
        }
        if invocation.json {
            invocation.standardOutput.line(
                try JSONOutput.text([
                    "deviceSignature": value, "dispatchTargetId": target, "requestId": requestId,
                    "creationTimeInEpochMillis": creationTime,
                ]))
        } else {
            invocation.standardOutput.line(value)
        }
        return ExitCode.success
    }

    // MARK: verify

    static let verify = Command(
        spec: CommandSpec(
            path: ["verify"],
            abstract: "Verify a compact ES256 JWS (such as a Device-Signature) with a public key; print its payload.",
            discussion:
                "Strict: three parts of unpadded base64url, alg exactly ES256, a 64-byte r||s signature, at most 16 KiB. Exit 0 and the payload on standard output when the signature verifies; exit 1 and the reason on standard error when not. Freshness and replay are the backend's checks, not made here. --json prints {\"valid\", \"header\", \"payload\"} (and on failure {\"valid\": false, \"code\", \"reason\"}).",
            options: [
                .value("public-key", "FILE", help: "The public key: PEM (PUBLIC KEY) or a JWK.", required: true),
                CommonOptions.json.spec,
            ],
            positionals: [PositionalSpec("JWS", help: "The compact JWS, or - to read it from standard input.")]
        )
    ) { invocation in
        let keyURL = invocation.context.fileURL(invocation.arguments.value("public-key") ?? "")
        let publicKey = try readPublicKey(keyURL)
        var compact = invocation.arguments.positionals[0]
        if compact == "-" {
            let input = invocation.context.readStandardInput(CompactJWS.maximumLength + 2)
            guard input.count <= CompactJWS.maximumLength + 2 else {
                return rejected(
                    invocation, code: "inputTooLarge",
                    reason: "the JWS on standard input is longer than \(CompactJWS.maximumLength) bytes")
            }
            compact = String(decoding: input, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let jws: CompactJWS
        let payload: Data
        do {
            jws = try CompactJWS(parsing: compact)
            payload = try jws.verifiedPayload(with: publicKey)
        } catch let error as DeviceSigningError {
            return rejected(invocation, code: error.code.rawValue, reason: error.reason)
        }
        if invocation.json {
            var header: [String: Any] = ["alg": jws.header.alg]
            if let kid = jws.header.kid { header["kid"] = kid }
            if let typ = jws.header.typ { header["typ"] = typ }
            let payloadValue: Any = JSONOutput.parse(payload) ?? String(decoding: payload, as: UTF8.self)
            invocation.standardOutput.line(
                try JSONOutput.text(["valid": true, "header": header, "payload": payloadValue]))
        } else {
            var bytes = Array(payload)
            if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
            invocation.standardOutput.write(bytes: bytes)
        }
        return ExitCode.success
    }

    private static func rejected(_ invocation: Invocation, code: String, reason: String) -> Int32 {
        if invocation.json {
            if let text = try? JSONOutput.text(["valid": false, "code": code, "reason": reason]) {
                invocation.standardOutput.line(text)
            }
        }
        invocation.standardError.line("Error: the JWS is not valid: \(reason)")
        return ExitCode.failure
    }

    /// A public key from a PEM `PUBLIC KEY` file or a JWK (a private JWK's public part is used).
    static func readPublicKey(_ url: URL) throws -> P256.Signing.PublicKey {
        let data = try BoundedInput.read(url, what: "a key file")
        let text = String(decoding: data, as: UTF8.self)
        do {
            if text.drop(while: \.isWhitespace).hasPrefix("{") {
                return try JWK(jsonRepresentation: data).publicKey()
            }
            if text.contains("PRIVATE KEY-----") {
                throw CLIFailure(
                    "\(url.path) holds a private key; give the public key ('fetchchannel key export KEYID' prints it)")
            }
            return try P256.Signing.PublicKey(pemRepresentation: text)
        } catch let error as DeviceSigningError {
            throw CLIFailure("\(url.path) is not a P-256 public key (PEM PUBLIC KEY or JWK): \(error.reason)")
        }
    }
}

import DeviceSigning
import FetchChannel
import Foundation

/// `fetchchannel fetch` and `fetchchannel redeem`: the fetch client and the redemption client
/// on the command line.
enum FetchCommands {
    static let all = [fetch, redeem]

    // MARK: fetch

    /// `--policy` values as the command line spells them, and the library's policies they name.
    static let policyNames: KeyValuePairs<String, ChannelPolicy> = [
        "push-only": .pushOnly, "accessibility": .accessibility,
    ]

    static func name(of policy: ChannelPolicy) -> String {
        policyNames.first { $0.value == policy }?.key ?? policy.description
    }

    static let fetch = Command(
        spec: CommandSpec(
            path: ["fetch"],
            abstract: "Fetch the pending out-of-band operations of every registered key, from all backends at once.",
            discussion: "Each registration (a key with a dispatch target, server and device id) is asked with its own "
                + "fresh Device-Signature, concurrently, with Accept: application/jose;charset=UTF-8: the answer is a "
                + "JWE to the key's encryption key, decrypted here (a key registered without one asks for "
                + "application/json). Prints the operations, oldest first (created, channel, server, token prefix), and "
                + "one line per failing backend on standard error with its typed error. Exit 0 when every backend "
                + "answered, 2 when some failed, 1 when all failed. --policy picks the channels: accessibility "
                + "(default: push, QR code and link) or push-only. --json prints {\"operations\": [Op + \"server\"], "
                + "\"errors\": [{\"code\", \"server\", \"message\", …}]}; a clock-skew error adds measuredOffsetMillis "
                + "and toleranceMillis, a network error networkKind, an invalid answer invalidResponseKind "
                + "(malformed, tooLarge, notHTTP, foreignRedeemUrl, undecryptable).",
            options: [
                .value(
                    "key", "KEYID", help: "Only this key's registration (repeatable; default: every registered key).",
                    repeatable: true),
                .value(
                    "policy", policyNames.map(\.key).joined(separator: "|"),
                    help: "Which channels to show (default: accessibility)."),
                .value("timeout-seconds", "S", help: "Per-request timeout (default: 15)."),
                CommonOptions.store.spec,
                CommonOptions.passphraseFile.spec,
                CommonOptions.json.spec,
            ]
        )
    ) { invocation in
        let arguments = invocation.arguments
        let policy = try arguments.choice("policy", from: policyNames) ?? .accessibility
        let timeout = try arguments.decimal("timeout-seconds", in: 0.1...600) ?? 15
        let access = KeyStoreAccess(invocation: invocation)
        let store = try access.open(create: false)

        // The registrations: the keys asked for, or every registered key.
        var selected: [KeyMetadata] = []
        if arguments.allValues("key").isEmpty {
            selected = try store.list().filter { $0.dispatchTargetId != nil }
            guard !selected.isEmpty else {
                throw CLIFailure(
                    "no key in \(store.directory.path) is registered with a backend; 'fetchchannel register' one first")
            }
        } else {
            for text in arguments.allValues("key") {
                let metadata = try store.metadata(try access.resolve(text, in: store))
                guard metadata.dispatchTargetId != nil else {
                    throw CLIFailure(
                        "key \(metadata.keyId) is not registered with a backend; 'fetchchannel register' it first")
                }
                if !selected.contains(where: { $0.keyId == metadata.keyId }) { selected.append(metadata) }
            }
        }
        // One passphrase opens every encrypted key; it is asked for only if one is encrypted.
        let needsPassphrase = selected.contains(where: \.needsPassphrase)
        let passphrase =
            needsPassphrase
            ? try invocation.passphrases.passphrase(
                for: .open(keyId: selected.count == 1 ? selected[0].keyId : "the selected keys")) : nil

        var registrations: [FetchRegistration] = []
        var unusable: [PendingOutOfBandOperationsError] = []
        for metadata in selected {
            let serverText = metadata.server ?? ""
            guard let server = URL(string: serverText), server.host != nil, let deviceId = metadata.deviceId,
                let target = metadata.dispatchTargetId
            else {
                unusable.append(
                    .networkError(
                        server: serverText,
                        cause: NetworkFailure(
                            .invalidURL, detail: "key \(metadata.keyId) records no usable server and device id")))
                continue
            }
            // The registration's encryption key: answers come as application/jose and are decrypted
            // with it; a key registered without one asks for JSON.
            let encryptionKey: P256.KeyAgreement.PrivateKey?
            do {
                encryptionKey = try store.loadEncryptionKey(metadata.keyId, passphrase: passphrase, tpm: access.tpm)
            } catch let error as DeviceSigningError {
                unusable.append(
                    .deviceProtectionError(
                        server: serverText,
                        reason: "the encryption key of key "
                            + "\(metadata.keyId) cannot be used: \(error.reason)"))
                continue
            }
            registrations.append(
                FetchRegistration(
                    server: server, deviceId: deviceId, dispatchTargetId: target,
                    signingKey: .keyStore(store, keyId: metadata.keyId, passphrase: passphrase),
                    trust: try BackendTrustOptions.stored(metadata),
                    encryptionKey: encryptionKey))
        }
        invocation.note("Fetching from \(registrations.count) backend\(registrations.count == 1 ? "" : "s")…")
        let client = FetchClient(
            configuration: FetchClientConfiguration(requestTimeout: .milliseconds(Int64((timeout * 1000).rounded()))))
        let result = await client.pendingOutOfBandOperations(registrations)
        let errors = unusable + result.errors
        let shown = result.operations.filter { policy.admits($0.dispatchChannel) }

        if invocation.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let operations = try shown.map { operation -> Any in
                JSONOutput.parse(try encoder.encode(operation)) ?? NSNull()
            }
            invocation.standardOutput.line(
                try JSONOutput.text(["operations": operations, "errors": errors.map(errorObject)]))
        } else if !shown.isEmpty {
            let rows = shown.map { operation in
                [
                    timestamp(operation.creationTimeInEpochMillis), operation.dispatchChannel.wireValue,
                    operation.server,
                    String(operation.token.prefix(8)) + "…",
                ]
            }
            for line in table(header: ["CREATED", "CHANNEL", "SERVER", "TOKEN"], rows: rows) {
                invocation.standardOutput.line(line)
            }
        }
        for error in errors {
            invocation.standardError.line("error: \(error.code) from \(error.server ?? "a backend"): \(error.message)")
        }
        let hidden = result.operations.count - shown.count
        invocation.note(
            "\(shown.count) pending operation\(shown.count == 1 ? "" : "s")"
                + (hidden > 0 ? " (\(hidden) on channels outside the \(name(of: policy)) policy not shown)" : "")
                + ", \(errors.count) of \(selected.count) backend\(selected.count == 1 ? "" : "s") failed.")
        if errors.isEmpty { return ExitCode.success }
        return errors.count >= selected.count ? ExitCode.failure : ExitCode.partial
    }

    /// `{"code", "server", "message"}` plus what the case carries.
    static func errorObject(_ error: PendingOutOfBandOperationsError) -> [String: Any] {
        var object: [String: Any] = [
            "code": error.code, "server": JSONOutput.orNull(error.server), "message": error.message,
        ]
        if let http = error.httpError { object["status"] = http.status }
        if let failure = error.networkFailure { object["networkKind"] = failure.kind.rawValue }
        if let cause = error.invalidResponse { object["invalidResponseKind"] = cause.kind.rawValue }
        if case .clockSkewTooBig = error {
            object["measuredOffsetMillis"] = JSONOutput.orNull(error.measuredOffsetMillis)
            object["toleranceMillis"] = JSONOutput.orNull(error.toleranceMillis)
        }
        return object
    }

    static func timestamp(_ millis: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }

    static func table(header: [String], rows: [[String]]) -> [String] {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.indices.map { column in
                column == row.count - 1
                    ? row[column] : row[column] + String(repeating: " ", count: widths[column] - row[column].count)
            }.joined(separator: "  ")
        }
    }

    // MARK: redeem

    static let redeem = Command(
        spec: CommandSpec(
            path: ["redeem"],
            abstract: "Redeem an operation's token at its redeem URL, once.",
            discussion:
                "POSTs {\"token\"} to the redeem URL (https://, or http:// on loopback), which you name: unlike the library's pipeline, this manual command does not restrict it to the backends a key is registered with. The TLS trust is --ca-file/--pin when given, else the one stored with the registration whose backend holds the URL, else the system CAs. Prints the backend's answer (op, statusCode, lifetimeMillis, uafRequest) and exits 0; a token redeemed before, an expired one or a failure exits 1 with what it means. --json prints the answer object, or {\"redeemed\": false, \"code\", \"message\"}.",
            options: [
                .value("redeem-url", "URL", help: "The operation's redeemUrl (from 'fetch --json').", required: true),
                .value("timeout-seconds", "S", help: "Request timeout (default: 15)."),
                CommonOptions.store.spec,
                CommonOptions.json.spec,
            ] + BackendTrustOptions.all.map(\.spec),
            positionals: [PositionalSpec("TOKEN", help: "The operation's redeem token.")]
        )
    ) { invocation in
        let arguments = invocation.arguments
        let token = arguments.positionals[0]
        guard !token.isEmpty else { throw UsageError("TOKEN must not be empty") }
        let url = try BackendURL(parsing: arguments.value("redeem-url") ?? "", option: "redeem-url")
        let timeout = try arguments.decimal("timeout-seconds", in: 0.1...600) ?? 15
        let client = RedemptionClient(requestTimeout: .milliseconds(Int64((timeout * 1000).rounded())))
        let trust = try redemptionTrust(invocation, url: url)
        switch await client.redeem(
            PendingOutOfBandOperation.RedeemData(token: token, redeemUrl: url.description),
            trust: trust)
        {
        case .success(let redeemed):
            if invocation.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                var object = (JSONOutput.parse(try encoder.encode(redeemed.body)) as? [String: Any]) ?? [:]
                object["redeemed"] = true
                invocation.standardOutput.line(try JSONOutput.text(object))
            } else {
                invocation.standardOutput.line("op: \(redeemed.op ?? "-")")
                invocation.standardOutput.line("statusCode: \(redeemed.statusCode.map(String.init) ?? "-")")
                invocation.standardOutput.line("lifetimeMillis: \(redeemed.lifetimeMillis.map(String.init) ?? "-")")
                invocation.standardOutput.line("uafRequest: \(redeemed.uafRequest ?? "-")")
            }
            invocation.note("Redeemed the token at \(url).")
            return ExitCode.success
        case .failure(let error):
            if invocation.json {
                var object: [String: Any] = ["redeemed": false, "code": error.code, "message": error.message]
                if let http = error.httpError { object["status"] = http.status }
                invocation.standardOutput.line(try JSONOutput.text(object))
            }
            throw CLIFailure(error.message)
        }
    }

    /// `--ca-file`/`--pin` when given; otherwise the trust stored with a registration whose
    /// backend holds the redeem URL (the operation came from it); otherwise the system CAs.
    static func redemptionTrust(_ invocation: Invocation, url: BackendURL) throws -> TLSTrust {
        let given = try BackendTrustOptions.parse(invocation, server: url)
        if given.caFile != nil || !given.pins.isEmpty { return given.trust }
        let access = KeyStoreAccess(invocation: invocation)
        guard access.exists, let store = try? access.open(create: false), let records = try? store.list() else {
            return .system
        }
        let registration = records.first { record in
            record.dispatchTargetId != nil
                && record.server.flatMap(URL.init(string:)).flatMap(BackendOrigin.init(url:))?.contains(url.url) == true
        }
        return try registration.map(BackendTrustOptions.stored) ?? .system
    }
}

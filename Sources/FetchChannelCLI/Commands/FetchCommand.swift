import DeviceSigning
import FetchChannel
import Foundation

/// `fetchchannel fetch`: the fetch client on the command line, for every registered key at once.
struct FetchCommand: CLICommand {
    /// `--policy` values as the command line spells them, and the library's policies they name.
    static let policyNames: KeyValuePairs<String, ChannelPolicy> = [
        "push-only": .pushOnly, "accessibility": .accessibility,
    ]

    static let key = Option(
        "key", "KEYID", help: "Only this key's registration (repeatable; default: every registered key).",
        repeatable: true, .keyReference)
    static let policy = Option(
        "policy", policyNames.map(\.key).joined(separator: "|"),
        help: "Which channels to show (default: accessibility).",
        .choice(policyNames))
    static let timeout = CommonOptions.timeout(help: "Per-request timeout (default: 15).")

    static let spec = CommandSpec(
        path: ["fetch"],
        abstract: "Fetch the pending out-of-band operations of every registered key, from all backends at once.",
        discussion: "Each registration (a key with a dispatch target, server and device id) is asked with its own "
            + "fresh Device-Signature, concurrently, with Accept: application/jose;charset=UTF-8: the answer is a "
            + "JWE to the key's encryption key, decrypted here (a key registered without one asks for "
            + "application/json). Prints the operations, oldest first (created, channel, server, token prefix), and "
            + "one line per failing backend on standard error with its typed error. Exit 0 when every backend "
            + "answered, 2 when some failed (or one answered operations beside an error), 1 when all failed. --policy picks the channels: accessibility "
            + "(default: push, QR code and link) or push-only. --json prints {\"operations\": [Op + \"server\"], "
            + "\"errors\": [{\"code\", \"server\", \"message\", …}]}; a clock-skew error adds measuredOffsetMillis "
            + "and toleranceMillis, a network error networkKind, an invalid answer invalidResponseKind "
            + "(malformed, tooLarge, notHTTP, foreignRedeemUrl, undecryptable). One passphrase opens every "
            + "encrypted key of the run (asked for once); a key under another passphrase fails as that "
            + "backend's deviceProtectionError: fetch it with --key.",
        options: [key, policy, timeout, CommonOptions.store, CommonOptions.passphraseFile, CommonOptions.json]
    )

    let policy: ChannelPolicy
    let timeout: Duration
    let access: KeyStoreAccess
    private var console: Console { access.console }
    /// The `--key` values as typed; empty for every registered key.
    let keys: [KeyReference]

    init(_ arguments: ParsedArguments, context: CLIContext) throws(UsageError) {
        policy = try arguments[Self.policy] ?? .accessibility
        timeout = try arguments[Self.timeout] ?? .seconds(15)
        access = try KeyStoreAccess(arguments, context: context)
        keys = try arguments.values(of: Self.key)
    }

    func run() async throws -> Int32 {
        let store = try access.open(create: false)
        let (selected, unreadable) = try selectedKeys(in: store)
        let (registrations, unusable) = try registrations(of: selected, in: store)
        // The keys that cannot be asked (a record that does not read, a key the passphrase does
        // not open) count among the failed backends at the end: said here, the counts agree.
        let notAsked = unreadable.count + unusable.count
        console.note(
            "Fetching from \(registrations.count) backend\(registrations.count == 1 ? "" : "s")"
                + (notAsked == 0
                    ? ""
                    : " (\(notAsked) more cannot be asked: \(notAsked == 1 ? "its error follows" : "their errors follow"))")
                + "…")
        let client = FetchClient(
            configuration: FetchClientConfiguration(requestTimeout: timeout), clock: access.context.wallClock)
        let result = await client.pendingOutOfBandOperations(registrations)
        let errors = unreadable + unusable + result.errors
        let backends = registrations.count + notAsked
        let shown = result.operations.filter { policy.admits($0.dispatchChannel) }
        try report(shown, errors: errors)
        let hidden = result.operations.count - shown.count
        let policyName = Self.policyNames.first { $0.value == policy }?.key ?? policy.description
        console.note(
            "\(shown.count) pending operation\(shown.count == 1 ? "" : "s")"
                + (hidden > 0 ? " (\(hidden) on channels outside the \(policyName) policy not shown)" : "")
                + ", \(errors.count) of \(backends) backend\(backends == 1 ? "" : "s") failed.")
        if errors.isEmpty { return ExitCode.success }
        // A backend that answered operations beside an error (one redeeming elsewhere) did answer.
        guard result.operations.isEmpty && errors.count >= backends else { return ExitCode.partial }
        // Exit 1 is a runtime failure, which says so as every other command's does.
        console.note("Error: no backend answered; each one's error is above.")
        return ExitCode.failure
    }

    /// The keys asked for with `--key`, or every registered key; each must be registered. Without
    /// `--key`, a record that cannot be read is an error of its own (its key may be registered),
    /// and the other keys are still asked.
    private func selectedKeys(
        in store: KeyStore
    ) throws -> (selected: [KeyMetadata], unreadable: [PendingOutOfBandOperationsError]) {
        guard !keys.isEmpty else {
            let listing = try store.listing()
            let registered = listing.records.filter { $0.dispatchTargetId != nil }
            let unreadable = listing.unreadable.map { record in
                PendingOutOfBandOperationsError.deviceProtectionError(
                    server: nil,
                    reason: "key \(record.keyId) was not asked: its record cannot be read. \(record.error.reason)")
            }
            guard !registered.isEmpty || !unreadable.isEmpty else {
                throw CLIFailure(
                    .keyStore,
                    "no key in \(store.directory.path) is registered with a backend; 'fetchchannel register' one first")
            }
            return (registered, unreadable)
        }
        var selected: [KeyMetadata] = []
        for key in keys {
            let metadata = try store.metadata(try access.resolve(key, in: store))
            guard metadata.dispatchTargetId != nil else {
                throw CLIFailure(
                    .keyStore,
                    "key \(metadata.keyId) is not registered with a backend; 'fetchchannel register' it first")
            }
            if !selected.contains(where: { $0.keyId == metadata.keyId }) { selected.append(metadata) }
        }
        return (selected, [])
    }

    /// The registrations to ask, and an error for each key that cannot be asked. One passphrase
    /// opens every encrypted key; it is asked for only if one is encrypted.
    private func registrations(
        of selected: [KeyMetadata], in store: KeyStore
    ) throws -> ([FetchRegistration], [PendingOutOfBandOperationsError]) {
        let passphrase =
            selected.contains(where: \.needsPassphrase)
            ? try access.passphrases.passphrase(
                for: selected.count == 1 ? .open(keyId: selected[0].keyId) : .openEach(what: "the selected keys"))
            : nil
        var registrations: [FetchRegistration] = []
        var unusable: [PendingOutOfBandOperationsError] = []
        for metadata in selected {
            switch try registration(of: metadata, in: store, passphrase: passphrase) {
            case .success(let registration): registrations.append(registration)
            case .failure(let error): unusable.append(error)
            }
        }
        return (registrations, unusable)
    }

    /// The registration `metadata` records, or why it cannot be asked. Answers come as
    /// application/jose and are decrypted with the key's encryption key; a key registered without
    /// one asks for JSON.
    private func registration(
        of metadata: KeyMetadata, in store: KeyStore, passphrase: SecureBytes?
    ) throws -> Result<FetchRegistration, PendingOutOfBandOperationsError> {
        let storedServer = metadata.server ?? ""
        let serverText = BackendURL.shown(storedServer)
        guard let deviceId = metadata.deviceId, let target = metadata.dispatchTargetId else {
            let detail = "key \(metadata.keyId) records no device id and dispatch target"
            return .failure(.networkError(server: serverText, cause: NetworkFailure(.invalidURL, detail: detail)))
        }
        // The stored URL by register's own rules (a hand-edited record may hold user info, a
        // query, dot segments).
        let server: URL
        do throws(UsageError) {
            server = try BackendURL(parsing: storedServer).url
        } catch {
            let detail = "key \(metadata.keyId) stores an unusable server URL: \(error.message)"
            return .failure(.networkError(server: serverText, cause: NetworkFailure(.invalidURL, detail: detail)))
        }
        // One key's unusable trust is that backend's error; the others are still asked.
        let trust: TLSTrust
        do throws(TLSTrustError) {
            trust = try BackendTrustOptions.trust(caFile: metadata.serverCAFile, pins: metadata.serverPins ?? [])
        } catch {
            let detail = "key \(metadata.keyId) stores an unusable TLS trust: \(error.reason)"
            return .failure(.networkError(server: serverText, cause: NetworkFailure(.other, detail: detail)))
        }
        let encryptionKey: P256.KeyAgreement.PrivateKey?
        do {
            encryptionKey = try store.loadEncryptionKey(metadata.keyId, passphrase: passphrase, tpm: access.tpm)
        } catch let error as DeviceSigningError {
            let reason = "the encryption key of key \(metadata.keyId) cannot be used: \(error.reason)"
            return .failure(.deviceProtectionError(server: serverText, reason: reason))
        }
        return .success(
            FetchRegistration(
                server: server, deviceId: deviceId, dispatchTargetId: target,
                signingKey: .keyStore(store, keyId: metadata.keyId, passphrase: passphrase, tpm: access.tpm),
                trust: trust, encryptionKey: encryptionKey))
    }

    /// The operations (a table, or the JSON object with the errors), and one line per error.
    private func report(_ shown: [PendingOutOfBandOperation], errors: [PendingOutOfBandOperationsError]) throws {
        if console.json {
            try console.printJSON([
                "operations": try shown.map(JSONOutput.tree), "errors": errors.map(Self.errorObject),
            ])
        } else if !shown.isEmpty {
            let rows = shown.map { operation in
                [
                    Self.timestamp(operation.creationTimeInEpochMillis),
                    PrintableText.oneLine(operation.dispatchChannel.wireValue), operation.server,
                    PrintableText.oneLine(operation.token.prefix(8)) + "…",
                ]
            }
            for line in Self.table(header: ["CREATED", "CHANNEL", "SERVER", "TOKEN"], rows: rows) {
                console.line(line)
            }
        }
        for error in errors {
            console.note("error: \(error.code) from \(error.server ?? "a backend"): \(error.message)")
        }
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

    /// The creation times `timestamp` prints as dates: 0000-01-01T00:00:00.000Z through
    /// 9999-12-31T23:59:59.999Z, the four-digit years of RFC 3339.
    static let datedMillis: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999

    /// `2026-11-30T01:43:03.123Z` (RFC 3339, UTC, proleptic Gregorian), computed exactly from the
    /// integer: Foundation's formatter goes through a Double and switches to the Julian calendar
    /// before 1582, and printed Int64.max or Int64.min ms as dates in other years. A backend's time
    /// outside four-digit years is shown as the number it sent, marked out of range.
    static func timestamp(_ millis: Int64) -> String {
        guard datedMillis.contains(millis) else { return "\(millis) ms (out of range)" }
        let millisPerDay: Int64 = 86_400_000
        let days = millis >= 0 ? millis / millisPerDay : (millis + 1) / millisPerDay - 1
        let inDay = millis - days * millisPerDay
        // Days since 1970-01-01 to a civil date (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func digits(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(digits(year, 4))-\(digits(month, 2))-\(digits(day, 2))T\(digits(inDay / 3_600_000, 2)):"
            + "\(digits(inDay / 60_000 % 60, 2)):\(digits(inDay / 1_000 % 60, 2)).\(digits(inDay % 1_000, 3))Z"
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
}

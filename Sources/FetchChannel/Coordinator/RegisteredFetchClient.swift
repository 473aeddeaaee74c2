/// A ``FetchClient`` with the registrations it fetches from: the real ``PendingOperationsFetching``.
///
/// The registrations are asked for at every trigger, so a device that registers or is
/// deregistered while the app runs is fetched for (or not) from the next trigger on. A fetch that
/// finds none left (deregistered between the check and the fetch) returns an empty result, and
/// the coordinator then cancels the notifications of operations it can no longer start. A list
/// that cannot be read now (the provider throws: a store locked or on a disk that failed) is not
/// an empty one: nothing is sent, and the fetch reports `deviceProtectionError` naming no server,
/// which keeps every notification. Its reason shows the error's description (256 characters at
/// most, on one line): throw one that says what failed, without secrets. When the fetch's task
/// was cancelled meanwhile, the reason says so instead (the provider's `CancellationError` is not
/// a store that failed).
///
/// Return the same registrations (their ``SigningKeySource``s) from call to call while they do
/// not change, and make new ones only when they do: the client recognises a key by its source, so
/// a source made anew at every trigger is a key loaded anew at every fetch (the store's key
/// derivation, or a load into the TPM).
public struct RegisteredFetchClient: PendingOperationsFetching {
    public let client: FetchClient
    private let registrations: @Sendable () async throws -> [FetchRegistration]

    /// Fetches from whatever `registrations` returns at the time; see above for when it throws.
    public init(client: FetchClient, registrations: @escaping @Sendable () async throws -> [FetchRegistration]) {
        self.client = client
        self.registrations = registrations
    }

    /// Fetches from a fixed list.
    public init(client: FetchClient, registrations: [FetchRegistration]) {
        self.init(client: client, registrations: { registrations })
    }

    /// True also when the registrations cannot be read now: the fetch says why.
    public func hasRegistration() async -> Bool {
        guard let current = try? await registrations() else { return true }
        return !current.isEmpty
    }

    public func fetch() async -> PendingOutOfBandOperationsResult {
        let current: [FetchRegistration]
        do {
            current = try await registrations()
        } catch {
            // A provider that stopped because the fetch was cancelled did not fail: say which.
            // The app's own error, on one line and at most 256 characters: it ends up in logs.
            let reason =
                Task.isCancelled
                ? "The fetch was cancelled while the registrations were read; nothing was sent."
                : "The registrations could not be read; nothing was sent: "
                    + QuotedText.shown(FetchClient.reason(error), maximumScalars: 256)
            return PendingOutOfBandOperationsResult(
                operations: [], errors: [.deviceProtectionError(server: nil, reason: reason)])
        }
        return await client.pendingOutOfBandOperations(current)
    }
}

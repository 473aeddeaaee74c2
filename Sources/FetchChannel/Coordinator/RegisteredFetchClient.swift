/// A ``FetchClient`` with the registrations it fetches from: the real ``PendingOperationsFetching``.
///
/// The registrations are asked for at every trigger, so a device that registers or is
/// deregistered while the app runs is fetched for (or not) from the next trigger on. A fetch that
/// finds none left (deregistered between the check and the fetch) returns an empty result, and
/// the coordinator then cancels the notifications of operations it can no longer start.
///
/// Return the same registrations (their ``SigningKeySource``s) from call to call while they do
/// not change, and make new ones only when they do: the client recognises a key by its source, so
/// a source made anew at every trigger is a key loaded anew at every fetch (the store's key
/// derivation, or a load into the TPM).
public struct RegisteredFetchClient: PendingOperationsFetching {
    public let client: FetchClient
    private let registrations: @Sendable () async -> [FetchRegistration]

    /// Fetches from whatever `registrations` returns at the time.
    public init(client: FetchClient, registrations: @escaping @Sendable () async -> [FetchRegistration]) {
        self.client = client
        self.registrations = registrations
    }

    /// Fetches from a fixed list.
    public init(client: FetchClient, registrations: [FetchRegistration]) {
        self.init(client: client, registrations: { registrations })
    }

    public func hasRegistration() async -> Bool {
        !(await registrations()).isEmpty
    }

    public func fetch() async -> PendingOutOfBandOperationsResult {
        await client.pendingOutOfBandOperations(await registrations())
    }
}

/// Fetches this device's pending operations from every backend it is registered on: what a
/// ``FetchCoordinator`` needs from the fetch client, behind a protocol so that tests can drive it
/// with a fake. ``RegisteredFetchClient`` adapts ``FetchClient``.
public protocol PendingOperationsFetching: Sendable {
    /// Whether a user (a registration with its key) exists: without one the coordinator does not fetch.
    func hasRegistration() async -> Bool
    /// One fetch from every registration. Never throws: a failing backend is an error in the
    /// result, next to the operations of the others.
    func fetch() async -> PendingOutOfBandOperationsResult
}

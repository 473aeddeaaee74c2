/// A notification the app shows (or has scheduled) for an operation, e.g. for a push it received.
public struct LocalNotification: Sendable, Hashable {
    /// The notification system's identifier: what cancelling uses.
    public let identifier: String
    /// The redeem token of the operation it announces.
    public let token: String
    /// The backend the operation came from (its base URL as operations and errors name it), when
    /// known. A notification without one is cancelled only after a fetch in which no backend failed.
    public let server: String?
    /// When it was posted (milliseconds since the epoch), for the app. A fetch only cancels
    /// notifications that were there before its request; it tells them by reading the list then,
    /// not by this time, which moves when the clock is set.
    public let postedAtMillis: Int64

    public init(identifier: String, token: String, server: String? = nil, postedAtMillis: Int64) {
        self.identifier = identifier
        self.token = token
        self.server = server
        self.postedAtMillis = postedAtMillis
    }
}

import DeviceSigning

/// ``LocalNotifications`` in memory, for tests and the demo: posting stamps the time from the
/// given clock, and every cancelled notification is kept in ``cancelled``.
public final class InMemoryLocalNotifications: LocalNotifications {
    private struct State {
        var shown: [LocalNotification] = []
        var cancelled: [LocalNotification] = []
        var nextNumber = 1
    }

    private let clock: any WallClock
    private let state = Locked(State())

    public init(clock: any WallClock = SystemWallClock()) {
        self.clock = clock
    }

    /// Shows a notification for `token` (identifier `notification-<n>` unless given) and returns it.
    @discardableResult
    public func post(token: String, server: String? = nil, identifier: String? = nil) -> LocalNotification {
        let now = clock.nowMillis()
        return state.withLock { state in
            let notification = LocalNotification(
                identifier: identifier ?? "notification-\(state.nextNumber)",
                token: token, server: server, postedAtMillis: now)
            state.nextNumber += 1
            state.shown.append(notification)
            return notification
        }
    }

    /// The notifications shown now, in the order they were posted.
    public var shown: [LocalNotification] { state.withLock { $0.shown } }

    /// Every notification cancelled so far, in the order of cancellation.
    public var cancelled: [LocalNotification] { state.withLock { $0.cancelled } }

    public func current() async -> [LocalNotification] { shown }

    public func cancel(identifiers: [String]) async {
        let doomed = Set(identifiers)
        state.withLock { state in
            let (gone, kept) = state.shown.reduce(into: ([LocalNotification](), [LocalNotification]())) {
                parts, notification in
                if doomed.contains(notification.identifier) {
                    parts.0.append(notification)
                } else {
                    parts.1.append(notification)
                }
            }
            state.shown = kept
            state.cancelled.append(contentsOf: gone)
        }
    }
}

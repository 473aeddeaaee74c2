/// The app's local notifications, as far as the coordinator needs them: which are there, and
/// cancelling some. An app adapts its platform's notification center; tests and the demo use
/// ``InMemoryLocalNotifications``.
public protocol LocalNotifications: Sendable {
    /// The notifications currently shown or scheduled.
    func current() async -> [LocalNotification]
    /// Removes the notifications with these identifiers (shown or scheduled); unknown ones are ignored.
    func cancel(identifiers: [String]) async
}

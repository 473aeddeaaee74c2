import DeviceSigning
import Testing

@testable import FetchChannel

extension Practices {
    @Suite struct NotificationReconciliationTests {
        static let other = "https://other.example"

        func note(_ token: String, server: String? = Practices.server, at time: Int64 = 10) -> LocalNotification {
            LocalNotification(identifier: "n-\(token)", token: token, server: server, postedAtMillis: time)
        }

        @Test func cancelsExactlyTheNotificationsWhoseTokenIsNoLongerPending() {
            let notifications = [
                note("pending"), note("redeemed-elsewhere"), note("expired", server: nil),
                note("also-pending", server: Self.other),
            ]
            let operations = [
                Practices.operation("pending", created: 1),
                Practices.operation("also-pending", created: 2, server: Self.other),
                Practices.operation("never-notified", created: 3),
            ]
            let stale = NotificationReconciliation.stale(
                notifications, operations: operations, failedServers: [])
            #expect(stale.map(\.token) == ["redeemed-elsewhere", "expired"])
        }

        /// Tokens are compared as bytes, as an operation's identity is: a notification for
        /// `tok-\u{E9}` is stale when only `tok-e\u{301}` is pending, another operation.
        @Test func aCanonicallyEquivalentTokenIsAnotherOperation() {
            let stale = NotificationReconciliation.stale(
                [note("tok-\u{E9}")], operations: [Practices.operation("tok-e\u{301}", created: 1)],
                failedServers: [])
            #expect(stale.map(\.identifier) == ["n-tok-\u{E9}"])
        }

        @Test func aFailedBackendKeepsItsNotificationsAndThoseOfUnknownOrigin() {
            let notifications = [note("a"), note("b", server: Self.other), note("c", server: nil)]
            let stale = NotificationReconciliation.stale(
                notifications, operations: [], failedServers: [Self.other])
            #expect(stale.map(\.token) == ["a"])
        }

        /// A notification whose server the app wrote another way (explicit port, trailing `/`,
        /// capitals) is still the failed backend's: kept. Another host's is not.
        @Test func aFailedBackendKeepsNotificationsThatNameItAnotherWay() {
            let notifications = [
                note("a", server: "https://other.example:443/"), note("b", server: "HTTPS://Other.Example"),
                note("c", server: "https://other.example:8443"), note("d", server: "not a url"),
            ]
            let stale = NotificationReconciliation.stale(
                notifications, operations: [], failedServers: [Self.other])
            #expect(stale.map(\.token) == ["c", "d"])
        }

        @Test func aFailureThatNamesNoServerKeepsEverything() {
            let stale = NotificationReconciliation.stale(
                [note("a"), note("b", server: nil)], operations: [],
                failedServers: [nil])
            #expect(stale.isEmpty)
        }

        @Test func inMemoryNotificationsCancelByIdentifierAndKeepAHistory() async {
            let clock = ManualWallClock(millis: 1_000)
            let notifications = InMemoryLocalNotifications(clock: clock)
            let first = notifications.post(token: "t1", server: Practices.server)
            clock.advance(byMillis: 5)
            let second = notifications.post(token: "t2")
            #expect(first.postedAtMillis == 1_000 && second.postedAtMillis == 1_005)
            #expect(first.identifier != second.identifier)
            await notifications.cancel(identifiers: [first.identifier, "unknown"])
            #expect(await notifications.current() == [second])
            #expect(notifications.cancelled == [first])
        }
    }
}

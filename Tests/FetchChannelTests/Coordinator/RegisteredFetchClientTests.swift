import DeviceSigning
import Foundation
import Testing

@testable import FetchChannel

/// Registrations that cannot be read now are not "no registrations": the trigger still fetches,
/// nothing is sent, the failure names no server, and every local notification stays.
extension FetchClientTests {
    struct StoreLocked: Error, CustomStringConvertible {
        var description: String { "the store is locked" }
    }

    @Test func registrationsThatCannotBeReadKeepEveryNotification() async throws {
        let clock = ManualWallClock(millis: 1_750_000_000_000)
        let notifications = InMemoryLocalNotifications(clock: clock)
        let shown = [
            notifications.post(token: "t1", server: "https://a.example"), notifications.post(token: "t2"),
        ]
        let transport = FakeTransport { _ in .notHTTP("no request expected") }
        let fetcher = RegisteredFetchClient(client: client(transport)) { () throws -> [FetchRegistration] in
            throw StoreLocked()
        }
        let coordinator = FetchCoordinator(
            fetcher: fetcher, pipeline: RedemptionPipeline(redeemer: ImmediateRedeemer()), policy: .pushOnly,
            notifications: notifications, clock: clock)
        let snapshot = try #require(await coordinator.handle(.foreground).snapshot)
        let error = try #require(snapshot.errors.first)
        #expect(snapshot.errors.count == 1 && error.code == "deviceProtectionError" && error.server == nil)
        #expect("\(error)".contains("the store is locked"), "\(error)")
        #expect(!"\(error)".contains("device key"), "no key is at fault: \(error)")
        #expect(snapshot.cancelledNotifications.isEmpty)
        #expect(notifications.shown == shown)
        #expect(transport.requests.isEmpty)
    }

    /// A provider that stops because the fetch was cancelled is reported as a cancellation, not
    /// as registrations that could not be read (its `CancellationError` in the reason).
    @Test func aProviderStoppedByCancellationSaysTheFetchWasCancelled() async throws {
        let transport = FakeTransport { _ in .notHTTP("no request expected") }
        let (started, starting) = AsyncStream<Void>.makeStream()
        let (never, keptOpen) = AsyncStream<Void>.makeStream()
        let fetcher = RegisteredFetchClient(client: client(transport)) { () async throws -> [FetchRegistration] in
            starting.yield()
            for await _ in never {}  // ends when the task is cancelled
            _ = keptOpen
            try Task.checkCancellation()
            return []
        }
        let fetch = Task { await fetcher.fetch() }
        for await _ in started { break }
        fetch.cancel()
        let result = await fetch.value
        let error = try #require(result.errors.first)
        #expect(result.errors.count == 1 && error.code == "deviceProtectionError" && error.server == nil)
        #expect("\(error)".contains("cancelled while the registrations were read"), "\(error)")
        #expect(!"\(error)".contains("CancellationError"), "\(error)")
        #expect(!"\(error)".contains("device key"), "no key is at fault: \(error)")
        #expect(transport.requests.isEmpty)
    }
}

import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelEmulator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
extension HTTPServerTests {
    /// The connection cap: refusal when every connection is busy, room made from the least recently used idle one.
    @Suite struct ConnectionLimitTests {
        @Test func connectionsBeyondTheLimitAreRefusedWhenNoneIsIdle() async throws {
            // Both served connections are busy in the handler until the test releases them; a
            // handler never released (a broken test) gives up after a minute.
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let configuration = HTTPTestSupport.configuration(maxConnections: 2)
            let (server, address) = try HTTPTestSupport.startServer(
                configuration,
                handler: { request in
                    if request.path == "/busy" {
                        entered.signal()
                        _ = release.wait(timeout: .now() + 60)
                    }
                    return HTTPTestSupport.echoHandler(request)
                })
            defer { server.stop() }
            // Runs before the stop above, which joins the handlers' threads: a test that returns or
            // throws before it releases them does not leave stop() waiting for them.
            defer {
                release.signal()
                release.signal()
            }

            typealias Observed = (RawHTTPClient.CloseOutcome, [Int])
            let (refused, afterwards) = try await DedicatedThreads.run { () throws -> Observed in
                let first = try RawHTTPClient(port: address.port)
                let second = try RawHTTPClient(port: address.port)
                try first.send(HTTPTestSupport.get("/busy"))
                try second.send(HTTPTestSupport.get("/busy"))
                let bothEntered = (0..<2).allSatisfy { _ in entered.wait(timeout: .now() + 10) == .success }
                guard bothEntered else { return (.timedOut, []) }
                let third = try RawHTTPClient(port: address.port)
                try? third.send(HTTPTestSupport.get("/3"))
                // 503 when the answer arrives before the close, otherwise only the close is seen.
                let thirdStatus = (try? third.readResponse())?.status ?? 503
                let closed = third.waitForClose()
                release.signal()
                release.signal()
                let statuses = [thirdStatus, try first.readResponse().status, try second.readResponse().status]
                first.close()
                _ = HTTPTestSupport.waitUntil { server.openConnectionCount == 1 }
                let fourth = try RawHTTPClient(port: address.port)
                return (closed, statuses + [try fourth.roundTrip(HTTPTestSupport.get("/4")).status])
            }
            #expect(refused == .closed)
            #expect(afterwards == [503, 200, 200, 200])
            #expect(server.statistics.rejectedConnections == 1)
            #expect(server.statistics.evictedConnections == 0)
        }

        @Test func atTheLimitTheLeastRecentlyUsedIdleConnectionMakesRoom() async throws {
            let configuration = HTTPTestSupport.configuration(maxConnections: 3)
            let (server, address) = try HTTPTestSupport.startServer(configuration)
            defer { server.stop() }

            struct Observed: Sendable {
                var statuses: [Int] = []
                var closed: [RawHTTPClient.CloseOutcome] = []
                var evictedAfterFirstNewcomer = -1
                var leftoverOfEvicted: [UInt8] = []
                var openAtTheEnd = -1
            }
            let observed = try await DedicatedThreads.run { () throws -> Observed in
                var observed = Observed()
                // Three kept-alive connections, idle after one request each; the first is the oldest.
                let clients = try (0..<3).map { _ in try RawHTTPClient(port: address.port) }
                for (index, client) in clients.enumerated() {
                    observed.statuses.append(try client.roundTrip(HTTPTestSupport.get("/\(index)")).status)
                }
                // The second is used again: after the first, the third is now the least recently used.
                observed.statuses.append(try clients[1].roundTrip(HTTPTestSupport.get("/again")).status)
                _ = HTTPTestSupport.waitUntil { server.statistics.idleConnections == 3 }

                let newcomer = try RawHTTPClient(port: address.port)
                observed.statuses.append(try newcomer.roundTrip(HTTPTestSupport.get("/new")).status)
                observed.closed.append(clients[0].waitForClose())
                observed.leftoverOfEvicted = clients[0].pendingBytes
                observed.evictedAfterFirstNewcomer = server.statistics.evictedConnections

                // The next newcomer closes the third, which has now been idle the longest.
                let another = try RawHTTPClient(port: address.port)
                observed.statuses.append(try another.roundTrip(HTTPTestSupport.get("/another")).status)
                observed.closed.append(clients[2].waitForClose())
                observed.statuses.append(try clients[1].roundTrip(HTTPTestSupport.get("/still")).status)
                observed.openAtTheEnd = server.openConnectionCount
                return observed
            }
            #expect(observed.statuses == [200, 200, 200, 200, 200, 200, 200], "every client is served, none refused")
            #expect(observed.closed == [.closed, .closed], "the least recently used idle connections were closed")
            #expect(observed.leftoverOfEvicted.isEmpty, "closed without an answer to anything")
            #expect(observed.evictedAfterFirstNewcomer == 1)
            #expect(server.statistics.evictedConnections == 2)
            #expect(server.statistics.rejectedConnections == 0)
            #expect(observed.openAtTheEnd == 3, "the second, the newcomer and the other one")
        }
    }
}

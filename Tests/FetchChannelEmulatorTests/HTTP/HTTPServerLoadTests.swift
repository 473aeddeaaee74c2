import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelEmulator

extension HTTPServerTests {
    @Suite struct LoadTests {
        @Test func sixteenKeepAliveClientsFiveHundredRequestsEach() throws {
            let clients = 16
            let requestsPerClient = 500

            let (server, address) = try HTTPTestSupport.startServer(handler: { request in
                .respond(.text(status: 200, request.path))
            })
            defer { server.stop() }
            let start = ContinuousClock.now
            let answered = HTTPTestSupport.onThreads(clients) { index -> Int in
                do {
                    let client = try RawHTTPClient(port: address.port)
                    var correct = 0
                    for number in 0..<requestsPerClient {
                        let path = "/client\(index)/request\(number)"
                        let response = try client.roundTrip(HTTPTestSupport.get(path))
                        if response.status == 200 && response.bodyText == path {
                            correct += 1
                        }
                    }
                    return correct
                } catch {
                    return -1
                }
            }
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print(
                "HTTPServer load: \(clients * requestsPerClient) requests in \(elapsed), "
                    + "\(Int(Double(clients * requestsPerClient) / seconds)) requests/s")

            #expect(answered == Array(repeating: requestsPerClient, count: clients))
            #expect(server.totalAccepted == clients)
            #expect(server.statistics.totalRequests == clients * requestsPerClient)
            #expect(
                HTTPTestSupport.socketDescriptorCount(port: address.port) >= 1,
                "the listener is visible to the leak check")
            server.stop()
            #expect(server.statistics.liveThreads == 0)
            #expect(server.openConnectionCount == 0)
            // Other code in the process may hold descriptors for a moment; a leak stays.
            // Every socket to or from the server's port is closed: nothing leaked on either side.
            #expect(
                HTTPTestSupport.waitUntil { HTTPTestSupport.socketDescriptorCount(port: address.port) == 0 },
                "sockets on port \(address.port) still open: \(HTTPTestSupport.socketDescriptorCount(port: address.port))"
            )
        }

        @Test func stopWithOpenConnectionsIsPromptAndJoinsEveryThread() throws {
            let inDelay = HTTPTestEvent()
            let inHang = HTTPTestEvent()
            let (server, address) = try HTTPTestSupport.startServer(handler: { request in
                switch request.path {
                case "/delay":
                    inDelay.signal()
                    return .respondAfter(delayMillis: 60_000, HTTPResponse(status: 200))
                case "/hang":
                    inHang.signal()
                    return .respondThenHang(HTTPResponse(status: 200))
                default:
                    return .respond(HTTPResponse(status: 200))
                }
            })
            defer { server.stop() }

            let idle = try (0..<8).map { _ in try RawHTTPClient(port: address.port) }
            for client in idle {
                #expect(try client.roundTrip(HTTPTestSupport.get("/")).status == 200)
            }
            let partial = try RawHTTPClient(port: address.port)
            try partial.send("GET /partial HTTP/1.1\r\nHo")
            let delayed = try RawHTTPClient(port: address.port)
            try delayed.send(HTTPTestSupport.get("/delay"))
            let hanging = try RawHTTPClient(port: address.port)
            try hanging.send(HTTPTestSupport.get("/hang"))
            #expect(inDelay.wait() && inHang.wait())
            #expect(HTTPTestSupport.waitUntil { server.openConnectionCount == 11 })
            #expect(server.statistics.liveThreads == 12)  // 11 connections + the accept thread

            let start = ContinuousClock.now
            server.stop()
            let elapsed = ContinuousClock.now - start
            #expect(elapsed < LooseTimeBounds.scaled(.seconds(2)), "stop took \(elapsed)")
            #expect(server.statistics.liveThreads == 0)
            #expect(server.openConnectionCount == 0)
            for client in idle + [partial, delayed, hanging] {
                #expect(client.waitForClose(timeout: .seconds(2)) == .closed)
            }
        }

        @Test func shortConnectionsAreReaped() throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }

            for number in 0..<100 {
                let client = try RawHTTPClient(port: address.port)
                let response = try client.roundTrip(
                    HTTPTestSupport.get("/\(number)", extraHeaders: "Connection: close\r\n"))
                #expect(response.status == 200)
                #expect(client.waitForClose() == .closed)
            }
            #expect(server.totalAccepted == 100)
            #expect(HTTPTestSupport.waitUntil { server.statistics.liveThreads == 1 && server.openConnectionCount == 0 })
        }
    }
}

import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

@testable import FetchChannelEmulator

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HTTPServerTests {
    @Suite struct BasicTests {
        private struct Echo: Decodable, Equatable {
            let method: String
            let path: String
            let query: String?
            let body: String
        }

        private func makeSession() -> URLSession {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = 10
            return URLSession(configuration: configuration)
        }

        @Test func getWithURLSession() async throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }
            let session = makeSession()
            defer { session.finishTasksAndInvalidate() }

            let url = try #require(URL(string: "\(address.baseURL.absoluteString)/hello/world?x=1&y=2"))
            let (data, response) = try await session.data(for: URLRequest(url: url))
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.statusCode == 200)
            #expect(http.value(forHTTPHeaderField: "Content-Type") == "application/json")
            #expect(http.value(forHTTPHeaderField: "Date")?.hasSuffix(" GMT") == true)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo == Echo(method: "GET", path: "/hello/world", query: "x=1&y=2", body: ""))
        }

        @Test func postWithURLSession() async throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }
            let session = makeSession()
            defer { session.finishTasksAndInvalidate() }

            var request = URLRequest(url: address.baseURL.appendingPathComponent("submit"))
            request.httpMethod = "POST"
            request.httpBody = Data("{\"answer\":42}".utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            let (data, response) = try await session.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            let echo = try JSONDecoder().decode(Echo.self, from: data)
            #expect(echo == Echo(method: "POST", path: "/submit", query: nil, body: "{\"answer\":42}"))
        }

        @Test func getAndPostWithRawSocket() throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }

            let getClient = try RawHTTPClient(port: address.port)
            let get = try getClient.roundTrip(HTTPTestSupport.get("/raw?q=%20"))
            #expect(get.status == 200)
            #expect(get.reason == "OK")
            #expect(get.headers["Content-Length"] == String(get.body.count))
            let date = try #require(get.headers["Date"])
            #expect(date.count == 29 && date.hasSuffix(" GMT"))
            #expect(get.bodyText.contains("\"query\":\"q=%20\""))

            let postClient = try RawHTTPClient(port: address.port)
            let post = try postClient.roundTrip(HTTPTestSupport.post("/raw", body: "payload"))
            #expect(post.status == 200)
            #expect(post.bodyText.contains("\"body\":\"payload\""))
            #expect(post.bodyText.contains("\"method\":\"POST\""))
        }

        @Test func keepAliveServesTwoRequestsOnOneConnection() throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            let first = try client.roundTrip(HTTPTestSupport.get("/one"))
            let second = try client.roundTrip(HTTPTestSupport.post("/two", body: "2"))
            #expect(first.status == 200 && first.bodyText.contains("/one"))
            #expect(second.status == 200 && second.bodyText.contains("/two"))
            #expect(first.headers["Connection"] == nil)
            #expect(server.totalAccepted == 1)
            #expect(server.statistics.totalRequests == 2)
        }

        /// The server's side of a connection is close-on-exec and non-blocking from accept on, so
        /// a child process never inherits it and no read can block past its deadline.
        @Test func anAcceptedConnectionIsCloseOnExecAndNonBlocking() throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }
            let client = try RawHTTPClient(port: address.port)
            #expect(try client.roundTrip(HTTPTestSupport.get("/kept")).status == 200)
            let clientPort = try #require(LoopbackSockets.localPort(of: client.fd))
            let accepted = LoopbackSockets.descriptors(withPeerPort: clientPort)
            #expect(accepted.count == 1, "the server's side of the connection: \(accepted)")
            for fd in accepted {
                #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0, "descriptor \(fd) is close-on-exec")
                #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0, "descriptor \(fd) is non-blocking")
            }
        }

        /// The stop pipe is made close-on-exec and non-blocking in one call (pipe2).
        @Test func theStopPipeIsCloseOnExecAndNonBlocking() throws {
            let signal = try HTTPStopSignal()
            for fd in [signal.readFD, signal.writeFD] {
                #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0, "descriptor \(fd) is close-on-exec")
                #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0, "descriptor \(fd) is non-blocking")
            }
        }

        @Test func pipelinedRequestsAreAnsweredInOrder() throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            try client.send(
                HTTPTestSupport.get("/a") + HTTPTestSupport.post("/b", body: "bee") + HTTPTestSupport.get("/c"))
            let paths = try (0..<3).map { _ in try client.readResponse().bodyText }
            #expect(paths[0].contains("\"/a\"") && paths[1].contains("\"bee\"") && paths[2].contains("\"/c\""))
        }

        @Test func connectionCloseFromClientIsHonoured() throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            let response = try client.roundTrip(HTTPTestSupport.get("/bye", extraHeaders: "Connection: close\r\n"))
            #expect(response.status == 200)
            #expect(response.headers["Connection"] == "close")
            #expect(client.waitForClose() == .closed)
        }

        @Test func connectionCloseFromHandlerIsHonoured() throws {
            let (server, address) = try HTTPTestSupport.startServer(handler: { _ in
                .respond(HTTPResponse(status: 200, headers: ["Connection": "close"], body: Array("done".utf8)))
            })
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            let response = try client.roundTrip(HTTPTestSupport.get("/"))
            #expect(response.bodyText == "done")
            #expect(response.headers.values(for: "Connection") == ["close"])
            #expect(client.waitForClose() == .closed)
        }

        @Test func http10ClosesUnlessKeepAliveIsAsked() throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }

            let plain = try RawHTTPClient(port: address.port)
            let first = try plain.roundTrip("GET /old HTTP/1.0\r\n\r\n")
            #expect(first.status == 200)
            #expect(first.headers["Connection"] == "close")
            #expect(plain.waitForClose() == .closed)

            let kept = try RawHTTPClient(port: address.port)
            let second = try kept.roundTrip("GET /kept HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(second.headers["Connection"] == "keep-alive")
            let third = try kept.roundTrip("GET /again HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(third.status == 200 && third.bodyText.contains("/again"))
        }

        @Test func headAnswerAnnouncesLengthWithoutBody() throws {
            let (server, address) = try HTTPTestSupport.startServer(handler: { _ in
                .respond(.text(status: 200, "twelve bytes"))
            })
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            let head = try client.roundTrip("HEAD / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(head.headers["Content-Length"] == "12")
            #expect(head.body.isEmpty)
            // Had a body followed the head, this answer would be misread.
            let get = try client.roundTrip(HTTPTestSupport.get("/"))
            #expect(get.bodyText == "twelve bytes")
        }

        @Test func requestCarriesSplitTargetHeadersAndPeer() throws {
            let seen = Locked<HTTPRequest?>(nil)
            let (server, address) = try HTTPTestSupport.startServer(handler: { request in
                seen.withLock { $0 = request }
                return .respond(HTTPResponse(status: 204))
            })
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            let response = try client.roundTrip(
                "PUT /items/a%2Fb?x=1&x=2 HTTP/1.1\r\nHost: h\r\nX-Multi: one\r\nx-multi:  two \r\nContent-Length: 3\r\n\r\nabc"
            )
            #expect(response.status == 204)
            #expect(response.headers["Content-Length"] == nil)
            let request = try #require(seen.withLock { $0 })
            #expect(request.method == "PUT")
            #expect(request.target == "/items/a%2Fb?x=1&x=2")
            #expect(request.path == "/items/a%2Fb")
            #expect(request.query == "x=1&x=2")
            #expect(request.headers.values(for: "X-MULTI") == ["one", "two"])
            #expect(request.headers["host"] == "h")
            #expect(request.body == Array("abc".utf8))
            #expect(request.peer.host == "127.0.0.1")
            #expect(request.peer.isLoopback)
            #expect(request.peer.port > 0)
        }

        @Test func dateHeaderUsesTheInjectedClock() throws {
            let configuration = HTTPTestSupport.configuration(clock: { 784_111_777_000 })
            let (server, address) = try HTTPTestSupport.startServer(configuration)
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            let ok = try client.roundTrip(HTTPTestSupport.get("/"))
            #expect(ok.headers["Date"] == "Sun, 06 Nov 1994 08:49:37 GMT")
            // Error answers written by the server itself carry it too.
            let bad = try client.roundTrip("GET / HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n")
            #expect(bad.status == 400)
            #expect(bad.headers["Date"] == "Sun, 06 Nov 1994 08:49:37 GMT")
            #expect(bad.headers["Content-Type"] == "application/json")
        }

        @Test func expectContinueIsAnsweredBeforeTheBody() throws {
            let (server, address) = try HTTPTestSupport.startServer()
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            try client.send("POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
            let interim = try client.readResponse()
            #expect(interim.status == 100)
            try client.send("hello")
            let final = try client.readResponse()
            #expect(final.status == 200 && final.bodyText.contains("\"hello\""))
        }

        @Test func invalidHandlerAnswerBecomes500() throws {
            let (server, address) = try HTTPTestSupport.startServer(handler: { _ in
                .respond(HTTPResponse(status: 200, headers: ["X-Split": "a\r\nInjected: yes"]))
            })
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            let response = try client.roundTrip(HTTPTestSupport.get("/"))
            #expect(response.status == 500)
            #expect(response.headers["Injected"] == nil)
        }

        @Test func idleConnectionIsClosedAfterTheIdleTimeout() throws {
            let configuration = HTTPTestSupport.configuration(idleTimeout: .milliseconds(200))
            let (server, address) = try HTTPTestSupport.startServer(configuration)
            defer { server.stop() }

            let client = try RawHTTPClient(port: address.port)
            #expect(try client.roundTrip(HTTPTestSupport.get("/")).status == 200)
            let start = ContinuousClock.now
            #expect(client.waitForClose(timeout: .seconds(5)) == .closed)
            #expect(ContinuousClock.now - start >= .milliseconds(150))
            #expect(client.pendingBytes.isEmpty)
        }

        @Test func nonLoopbackHostsAreRefusedUnlessAllowed() throws {
            let exposed = HTTPServer(configuration: .init(host: "0.0.0.0")) { _ in .closeWithoutAnswer }
            #expect(throws: HTTPServerError(.nonLoopbackHost)) { try exposed.start() }

            let named = HTTPServer(configuration: .init(host: "example.com")) { _ in .closeWithoutAnswer }
            #expect(throws: HTTPServerError(.invalidHost)) { try named.start() }

            let badPort = HTTPServer(configuration: .init(port: 70_000)) { _ in .closeWithoutAnswer }
            #expect(throws: HTTPServerError(.invalidConfiguration)) { try badPort.start() }

            // Values whose arithmetic would overflow (a "never" timeout, an unlimited line) are refused.
            let forever = HTTPServer(configuration: .init(idleTimeout: .seconds(Int64.max))) { _ in .closeWithoutAnswer
            }
            #expect(throws: HTTPServerError(.invalidConfiguration)) { try forever.start() }
            let unlimited = HTTPServer(configuration: .init(limits: .init(maxRequestLineLength: .max))) { _ in
                .closeWithoutAnswer
            }
            #expect(throws: HTTPServerError(.invalidConfiguration)) { try unlimited.start() }
            #expect(HTTPPoll.millisecondsUntil(ContinuousClock.now + .seconds(Int64.max / 100)) == .max)
            #expect(HTTPPoll.millisecondsUntil(ContinuousClock.now + .seconds(3_000_000)) == .max)
            // What allowNonLoopback lets through is not bound here: tests listen on loopback only.
        }

        @Test(.enabled(if: HTTPTestSupport.ipv6LoopbackAvailable, "::1 cannot be bound on this machine"))
        func servesOnIPv6Loopback() throws {
            let (server, address) = try HTTPTestSupport.startServer(HTTPServer.Configuration(host: "::1"))
            defer { server.stop() }
            #expect(address.baseURL.absoluteString == "http://[::1]:\(address.port)")
            let client = try RawHTTPClient(port: address.port, host: "::1")
            let response = try client.roundTrip(HTTPTestSupport.get("/six"))
            #expect(response.status == 200)
        }

        @Test func aServerStartsOnceAndStopIsIdempotent() throws {
            let (server, address) = try HTTPTestSupport.startServer()
            #expect(address.baseURL.absoluteString == "http://127.0.0.1:\(address.port)")
            #expect(server.address == address)
            #expect(throws: HTTPServerError(.alreadyStarted)) { try server.start() }

            // Concurrent stops all return only when the server is fully stopped.
            let stats = HTTPTestSupport.onThreads(4) { _ in
                server.stop()
                return server.statistics.liveThreads
            }
            #expect(stats == [0, 0, 0, 0])
            server.stop()
            #expect(throws: HTTPServerError(.alreadyStopped)) { try server.start() }
            #expect(throws: RawHTTPClient.ClientError.connectFailed(ECONNREFUSED)) {
                _ = try RawHTTPClient(port: address.port)
            }

            let neverStarted = HTTPServer { _ in .closeWithoutAnswer }
            neverStarted.stop()
            #expect(throws: HTTPServerError(.alreadyStopped)) { try neverStarted.start() }
        }

        @Test func handlerMayStopTheServer() throws {
            let holder = Locked<HTTPServer?>(nil)
            let server = HTTPServer(configuration: HTTPTestSupport.configuration()) { _ in
                holder.withLock { $0 }?.stop()
                return .respond(.text(status: 200, "stopping"))
            }
            holder.withLock { $0 = server }
            defer { holder.withLock { $0 = nil } }
            let address = try server.start()

            let client = try RawHTTPClient(port: address.port)
            let response = try client.roundTrip(HTTPTestSupport.get("/stop"))
            #expect(response.status == 200)
            #expect(response.headers["Connection"] == "close")
            #expect(client.waitForClose() == .closed)
            #expect(HTTPTestSupport.waitUntil { server.statistics.liveThreads == 0 })
        }

        @Test func deinitStopsTheServer() throws {
            var server: HTTPServer? = HTTPServer(
                configuration: HTTPTestSupport.configuration(), handler: HTTPTestSupport.echoHandler)
            let address = try #require(try server?.start())
            let client = try RawHTTPClient(port: address.port)
            #expect(try client.roundTrip(HTTPTestSupport.get("/")).status == 200)
            server = nil
            #expect(client.waitForClose(timeout: .seconds(5)) == .closed)
            #expect(throws: RawHTTPClient.ClientError.connectFailed(ECONNREFUSED)) {
                _ = try RawHTTPClient(port: address.port)
            }
        }
    }
}

#if os(Linux)
    import FetchChannelTestSupport
    import DeviceSigning
    import FetchChannelEmulator
    import Foundation
    import Testing

    @testable import FetchChannel

    /// The libcurl transport over plain HTTP on loopback: against the reference backend and against
    /// raw servers that misbehave on purpose. Each test uses a transport of its own, so that its
    /// connection counts are its own; blocking waits run on a ``DedicatedThread``.
    @Suite(.dedicatedThread) struct CurlTransportTests {
        let transport = CurlTransport()

        static func request(
            _ url: URL, method: String = "GET", headers: [String: String] = [:], body: Data? = nil,
            timeout: Duration = .seconds(10)
        ) -> TransportRequest {
            TransportRequest(method: method, url: url, headers: headers, body: body, timeout: timeout)
        }

        static func url(_ port: Int, _ path: String = "/") -> URL {
            URL(string: "http://127.0.0.1:\(port)\(path)")!
        }

        /// Reads a request and never answers; records when the client closes the connection.
        static func silentServer() throws -> RawTestServer {
            try RawTestServer { connection in
                _ = connection.readRequest()
                connection.waitForClose()
            }
        }

        /// A keep-alive answer with a small body.
        static let okAnswer = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"

        @Test func getAndPostRoundTripWithTheReferenceBackend() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let body = Data(#"{"deviceId":"transport-test","channel":"link"}"#.utf8)
            let posted = await transport.send(
                Self.request(
                    backend.baseURL.appendingPathComponent("_emulator/dispatch"),
                    method: "POST", headers: ["Content-Type": "application/json"],
                    body: body))
            let created = try #require(posted.answer, "\(posted)")
            #expect(created.status == 201)
            #expect(created.header("content-type")?.hasPrefix("application/json") == true)
            #expect(created.header("Date") != nil, "headers are collected, looked up in any case")
            let operation = try JSONSerialization.jsonObject(with: created.body) as? [String: Any]
            #expect(operation?["dispatchChannel"] as? String == "link")

            let fetched = await transport.send(Self.request(backend.baseURL.appendingPathComponent("_emulator/stats")))
            let stats = try #require(fetched.answer, "\(fetched)")
            #expect(stats.status == 200)
            #expect(String(decoding: stats.body, as: UTF8.self).contains("requests"))
            #expect(!stats.bodyWasCutOff)
        }

        /// Wall-clock bounds are loose on purpose: in a full parallel run on two busy cores the
        /// cooperative threads that resume a test can be held for tens of seconds by blocking tests.
        /// What happened is proved by the failure kind and by what the server saw, on threads of their own.
        /// The sanitizer runs stretch it (``LooseTimeBounds``).
        static let noHangBound = LooseTimeBounds.scaled(.seconds(60))

        @Test func oneConnectionCarriesSeveralRequests() async throws {
            // An idle timeout longer than any stall of a loaded machine between two requests.
            let backend = try ReferenceBackend.start(.init(http: .init(idleTimeout: .seconds(600))))
            defer { backend.stop() }
            for _ in 0..<5 {
                let result = await transport.send(
                    Self.request(backend.baseURL.appendingPathComponent("_emulator/stats")))
                #expect(result.answer?.status == 200, "\(result)")
            }
            #expect(backend.serverStatistics.totalRequests == 5)
            #expect(backend.serverStatistics.totalAccepted == 1, "the connection is kept alive between requests")
        }

        /// Plain http to loopback has no certificate to check, so a registration's CA file is
        /// not read for it: one that is missing used to fail the request as an untrusted certificate.
        @Test func plainHTTPDoesNotReadTheCAFile() async throws {
            let server = try RawTestServer { connection in
                while connection.readRequest() != nil { connection.write(Self.okAnswer) }
            }
            defer { server.stop() }
            let missing = "/nonexistent/fetchchannel-\(UUID().uuidString)/ca.pem"
            let request = TransportRequest(
                method: "GET", url: Self.url(server.port), headers: [:], body: nil, timeout: .seconds(10),
                trust: try TLSTrust.caFile(missing))
            let result = await transport.send(request)
            #expect(result.answer?.status == 200, "\(result)")
        }

        /// libcurl opens its sockets without close-on-exec; the transport asks for it, so that a
        /// process the app starts does not inherit a kept-alive connection to a backend.
        @Test func aKeptAliveConnectionIsClosedOnExec() async throws {
            let backend = try ReferenceBackend.start(.init(http: .init(idleTimeout: .seconds(600))))
            defer { backend.stop() }
            let port = try #require(backend.baseURL.port)
            let result = await transport.send(Self.request(backend.baseURL.appendingPathComponent("_emulator/stats")))
            #expect(result.answer?.status == 200, "\(result)")
            let connections = LoopbackSockets.descriptors(withPeerPort: port)
            #expect(connections.count == 1, "the kept-alive connection is open: \(connections)")
            for fd in connections {
                #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0, "descriptor \(fd) is close-on-exec")
            }
        }

        @Test func aSubSecondTimeoutFiresAsATimeout() async throws {
            let silent = try Self.silentServer()
            defer { silent.stop() }
            let began = ContinuousClock.now
            let result = await transport.send(Self.request(Self.url(silent.port), timeout: .milliseconds(300)))
            let elapsed = ContinuousClock.now - began
            #expect(result.failureKind == .timedOut, "\(result)")
            // libcurl counts whole milliseconds from the start of the transfer.
            #expect(elapsed >= .milliseconds(298), "not before the timeout: \(elapsed)")
            #expect(elapsed < Self.noHangBound, "the timeout, not a later limit, ended it: \(elapsed)")
            let closed = await DedicatedThreads.run { silent.waitUntil { $0.closedByClient == 1 } }
            #expect(closed, "the timed-out transfer's connection is closed")
        }

        /// The transport's timer is armed for libcurl's earliest timeout, left armed when a
        /// transfer ends, and set again when it fires before libcurl's next: an earlier request's
        /// timeout, longer or shorter, never moves a later one's. The loop's safety wake-up is
        /// made longer than the bound, so only the timer can end these transfers in time.
        ///
        /// The order matters: a new connection brings libcurl timers of its own (200 ms for the
        /// connection attempt), so the requests that leave a timer behind go over kept-alive
        /// connections made earlier, and the last timeout is awaited on a kept-alive connection too.
        @Test func aTimeoutFiresOnTimeWhateverTimeoutCameBefore() async throws {
            let transport = CurlTransport(longestSleep: .seconds(300))
            let backend = try ReferenceBackend.start(.init(http: .init(idleTimeout: .seconds(600))))
            defer { backend.stop() }
            let silent = try Self.silentServer()
            defer { silent.stop() }
            // Answers the first two requests of each connection, then reads one and never answers.
            let twice = try RawTestServer { connection in
                for _ in 0..<2 {
                    guard connection.readRequest() != nil else { return }
                    connection.write(Self.okAnswer)
                }
                _ = connection.readRequest()
                connection.waitForClose()
            }
            defer { twice.stop() }
            let stats = backend.baseURL.appendingPathComponent("_emulator/stats")
            func answered(_ url: URL, within timeout: Duration) async {
                let result = await transport.send(Self.request(url, timeout: timeout))
                #expect(result.answer?.status == 200, "\(result)")
            }
            func timesOut(_ url: URL, after timeout: Duration) async {
                let began = ContinuousClock.now
                let result = await transport.send(Self.request(url, timeout: timeout))
                let elapsed = ContinuousClock.now - began
                #expect(result.failureKind == .timedOut, "\(result)")
                #expect(elapsed >= timeout - .milliseconds(2), "not before the timeout: \(elapsed)")
                // A timer left at an earlier request's 120 s, or lost after it fired early, would end
                // the transfer only at 120 s or at the loop's 300 s wake-up.
                #expect(elapsed < Self.noHangBound, "its own timeout ended it: \(elapsed)")
            }
            await answered(stats, within: .seconds(10))  // two kept-alive connections
            await answered(Self.url(twice.port), within: .seconds(10))
            await timesOut(Self.url(silent.port), after: .milliseconds(300))  // their connect timers expire
            await answered(stats, within: .seconds(120))  // leaves the timer armed for 120 s
            await timesOut(Self.url(silent.port), after: .milliseconds(300))  // must move it nearer
            // Seconds, not milliseconds: an answer must arrive in time on a loaded machine too.
            await answered(Self.url(twice.port), within: .seconds(2))  // leaves it armed for 2 s
            await timesOut(Self.url(twice.port), after: .milliseconds(2_500))  // fires early: must be set again
            #expect(twice.counters.accepted == 1, "the last two requests reused the first one's connection")
        }

        @Test func cancellingTheTaskRemovesTheTransfer() async throws {
            let silent = try Self.silentServer()
            defer { silent.stop() }
            let transport = self.transport
            // The request's own timeout and the bound on the close keep their ratio when the
            // sanitizer runs stretch both: the close must come long before the timeout could.
            let requestTimeout = LooseTimeBounds.scaled(.seconds(60))
            // Not on the global pool, which other suites' bodies can keep busy (see below).
            let sender = DedicatedThreadExecutor()
            defer { sender.shutDown() }
            let sending = Task(executorPreference: sender) {
                await transport.send(Self.request(Self.url(silent.port), timeout: requestTimeout))
            }
            let arrived = await DedicatedThreads.run {
                silent.waitUntil(timeout: Self.noHangBound) { $0.requests == 1 }
            }
            try #require(arrived, "the request reached the server")
            sending.cancel()
            // Measured by the server, on its own thread: the transfer is removed and its connection
            // closed at once, long before the request's own timeout.
            let closed = await DedicatedThreads.run {
                silent.waitUntil(timeout: LooseTimeBounds.scaled(.seconds(10))) { $0.closedByClient == 1 }
            }
            #expect(closed, "the cancelled transfer's connection is closed at once")
            let result = await sending.value
            #expect(result.failureKind == .cancelled, "\(result)")
        }

        @Test func aTaskCancelledBeforeSendingSendsNothing() async throws {
            let server = try RawTestServer { connection in
                while connection.readRequest() != nil { connection.write(Self.okAnswer) }
            }
            defer { server.stop() }
            let transport = self.transport
            let result = await Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return await transport.send(Self.request(Self.url(server.port)))
            }.value
            #expect(result.failureKind == .cancelled, "\(result)")
            #expect(server.counters.accepted == 0)
        }

        /// A loop whose thread could not be made is no loop: its requests would wait unanswered,
        /// with no timer running. The transport then fails each request at once.
        @Test func aLoopWithoutItsThreadIsNotStarted() {
            let started = CurlMultiLoop.start(name: "fetchchannel-curl-test", spawn: { _ in false })
            guard case .failure(let failure) = started else {
                Issue.record("a loop without a thread was started")
                return
            }
            #expect(failure.detail.contains("could not start its thread"), "\(failure)")
        }

        /// A cancellation that reaches the loop before the transfer does (the task was cancelled
        /// between `send`'s own check and its cancellation handler) still keeps the request off the
        /// network: the loop marks the transfer, and its submission does not start it.
        @Test func aTransferCancelledBeforeItsSubmissionIsNeverStarted() async throws {
            let server = try RawTestServer { connection in
                while connection.readRequest() != nil { connection.write(Self.okAnswer) }
            }
            defer { server.stop() }
            let loop = try CurlMultiLoop.start(name: "fetchchannel-curl-test").get()
            defer { loop.shutdown() }
            let transfer = try CurlTransfer.make(for: Self.request(Self.url(server.port)), from: transport.handles)
                .get()
            loop.cancel(transfer)
            let result = await withCheckedContinuation { continuation in
                loop.submit(transfer, continuation: continuation)
            }
            #expect(result.failureKind == .cancelled, "\(result)")
            // The loop is usable: the next transfer goes out and is answered.
            let next = try CurlTransfer.make(for: Self.request(Self.url(server.port)), from: transport.handles).get()
            let answered = await withCheckedContinuation { continuation in
                loop.submit(next, continuation: continuation)
            }
            #expect(answered.answer?.status == 200, "\(answered)")
            #expect(server.counters.requests == 1, "only the transfer that was not cancelled was sent")
        }

        /// No request asks to switch protocols, so a 101 is refused as not the HTTP answer asked
        /// for: libcurl would take it as the final head and pass the rest as the body, past the
        /// checks made at the end of a head (here a transfer coding that is not chunked).
        @Test func anUnaskedSwitchOfProtocolsIsNotAnAnswer() async throws {
            let server = try RawTestServer { connection in
                _ = connection.readRequest()
                connection.write(
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: other\r\nConnection: Upgrade\r\n"
                        + "Transfer-Encoding: gzip\r\n\r\nbytes of another protocol")
                connection.waitForClose()
            }
            defer { server.stop() }
            let result = await transport.send(Self.request(Self.url(server.port), timeout: .seconds(20)))
            guard case .notHTTP(let detail) = result else {
                Issue.record("a 101 was taken as an answer: \(result)")
                return
            }
            #expect(detail.contains("101"), "\(detail)")
        }

        /// A request's timeout counts from when it was asked for, not from when the loop starts
        /// the transfer: time spent before (reading a CA file, waiting for the loop's lock while
        /// another connection's handshake holds it) is taken off. Here the transfer is made as if
        /// asked for long ago, which stands in for that wait.
        @Test func theTimeoutCountsFromTheRequestNotFromTheTransfersStart() async throws {
            let server = try Self.silentServer()
            defer { server.stop() }
            let loop = try CurlMultiLoop.start(name: "fetchchannel-curl-test").get()
            defer { loop.shutdown() }
            let request = Self.request(Self.url(server.port), timeout: .seconds(20))

            // All of its time gone before the submission: it times out and is never sent.
            let late = try CurlTransfer.make(
                for: request, from: transport.handles, requestedAt: .now - .seconds(21)
            ).get()
            let expired = await withCheckedContinuation { loop.submit(late, continuation: $0) }
            #expect(expired.failureKind == .timedOut, "\(expired)")
            #expect(server.counters.accepted == 0, "a request whose time ran out was still sent")

            // 200 ms of its 20 s left: it ends after about that long, not after 20 s.
            let started = ContinuousClock.now
            let nearlyLate = try CurlTransfer.make(
                for: request, from: transport.handles, requestedAt: .now - .milliseconds(19_800)
            ).get()
            let timedOut = await withCheckedContinuation { loop.submit(nearlyLate, continuation: $0) }
            #expect(timedOut.failureKind == .timedOut, "\(timedOut)")
            #expect(ContinuousClock.now - started < .seconds(10), "the timeout started over when the transfer began")
        }

        /// epoll refusing a connection's socket (ENOMEM, `max_user_watches`) ends that transfer
        /// alone: another backend's transfer, running meanwhile, gets its answer, and the loop takes
        /// new transfers after. Told to libcurl, the refusal would abort every transfer.
        @Test func aSocketEpollRefusesEndsOnlyItsOwnTransfer() async throws {
            let gate = DispatchSemaphore(value: 0)
            let slow = try RawTestServer { connection in
                _ = connection.readRequest()
                _ = gate.wait(timeout: .now() + 60)
                connection.write(Self.okAnswer)
                connection.waitForClose()
            }
            defer { slow.stop() }
            // Runs before the stop above: a test that throws before it opens the gate does not leave
            // the connection's thread waiting behind it.
            defer { gate.signal() }
            let quick = try RawTestServer { connection in
                while connection.readRequest() != nil { connection.write(Self.okAnswer) }
            }
            defer { quick.stop() }
            let refusing = Locked(false)
            // Only a socket new to the set is refused: the first transfer's own socket may change
            // what it is watched for (sent, now reading) while the refusal is on, and refusing that
            // change would end the transfer this test shows untouched.
            let loop = try CurlMultiLoop.start(
                name: "fetchchannel-curl-test",
                epollWatch: { epoll, socket, what, isNew in
                    refusing.withLock { $0 } && isNew != 0
                        ? -ENOMEM : CurlMultiState.systemEpollWatch(epoll, socket, what, isNew)
                }
            ).get()
            defer { loop.shutdown() }
            func send(_ port: Int) async throws -> TransportResult {
                let transfer = try CurlTransfer.make(for: Self.request(Self.url(port)), from: transport.handles).get()
                return await withCheckedContinuation { loop.submit(transfer, continuation: $0) }
            }
            // On a thread of its own, as the wait below is: on the global pool, which the sanitizer
            // runs keep busy with other suites' CPU-bound bodies, it once stayed unstarted for the
            // whole wait, and its request never arrived.
            let sender = DedicatedThreadExecutor()
            defer { sender.shutDown() }
            let waiting = Task(executorPreference: sender) { try await send(slow.port) }
            #expect(slow.waitUntil { $0.requests == 1 }, "the first transfer's request arrives")

            refusing.withLock { $0 = true }
            let refused = try await send(quick.port)
            refusing.withLock { $0 = false }
            #expect(refused.failureKind == .other, "\(refused)")
            #expect(refused.failureDetail?.contains("epoll") == true, "\(refused)")

            gate.signal()
            let answered = try await waiting.value
            #expect(answered.answer?.status == 200, "the other transfer is untouched: \(answered)")
            let next = try await send(quick.port)
            #expect(next.answer?.status == 200, "the loop goes on: \(next)")
        }

        /// Easy handles are reused (``CurlEasyHandlePool``), reset in between: a request after a
        /// PUT with a body and a header field of its own is a plain GET with neither.
        @Test func aReusedHandleCarriesNothingOfTheRequestBefore() async throws {
            let server = try RawTestServer { connection in
                while connection.readRequest() != nil { connection.write(Self.okAnswer) }
            }
            defer { server.stop() }
            let first = await transport.send(
                Self.request(
                    Self.url(server.port, "/first"), method: "PUT", headers: ["X-First": "only-here"],
                    body: Data("first body".utf8)))
            #expect(first.answer?.status == 200, "\(first)")
            #expect(transport.handles.idleCount == 1, "the handle is kept for the next request")
            let second = await transport.send(Self.request(Self.url(server.port, "/second")))
            #expect(second.answer?.status == 200, "\(second)")
            #expect(transport.handles.idleCount == 1, "the same handle served the second request")

            let heads = server.counters.heads
            try #require(heads.count == 2, "\(heads)")
            #expect(heads[0].hasPrefix("PUT /first HTTP/1.1"), "\(heads[0])")
            #expect(heads[1].hasPrefix("GET /second HTTP/1.1"), "\(heads[1])")
            #expect(!heads[1].lowercased().contains("x-first"), "\(heads[1])")
            #expect(!heads[1].lowercased().contains("content-length"), "\(heads[1])")
        }

        /// libcurl 7.88 keeps a handle's last socket error into its next transfer, where the
        /// failure mapping would read it: a handle whose connection was refused is not kept.
        @Test func aHandleWithASocketErrorIsNotKept() async throws {
            let refused = await transport.send(Self.request(Self.url(try RefusedPort.make())))
            #expect(refused.failureKind == .connectionRefused, "\(refused)")
            #expect(transport.handles.idleCount == 0)
            let server = try RawTestServer { connection in
                while connection.readRequest() != nil { connection.write(Self.okAnswer) }
            }
            defer { server.stop() }
            let answered = await transport.send(Self.request(Self.url(server.port)))
            #expect(answered.answer?.status == 200, "\(answered)")
            #expect(transport.handles.idleCount == 1, "a handle without one is kept")
        }

        /// The pool keeps at most its capacity; the rest are freed.
        @Test func thePoolKeepsAtMostItsCapacity() {
            let pool = CurlEasyHandlePool()
            let handles = (0..<(CurlEasyHandlePool.capacity + 3)).compactMap { _ in pool.take() }
            #expect(handles.count == CurlEasyHandlePool.capacity + 3)
            #expect(Set(handles).count == handles.count, "an empty pool makes new handles")
            for handle in handles { pool.giveBack(handle) }
            #expect(pool.idleCount == CurlEasyHandlePool.capacity)
            let again = pool.take()
            #expect(again.map(handles.contains) == true, "a kept handle is handed out again")
            if let again { pool.giveBack(again) }
        }

        @Test func aBodyAnnouncedAboveTheCapIsNotRead() async throws {
            let server = try RawTestServer { connection in
                _ = connection.readRequest()
                connection.write(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(2 << 20)\r\n\r\n{")
                connection.waitForClose()  // the rest never comes: only an early stop ends the request
            }
            defer { server.stop() }
            let result = await transport.send(Self.request(Self.url(server.port), timeout: .seconds(30)))
            let answer = try #require(result.answer, "\(result)")
            #expect(answer.status == 200)
            #expect(answer.bodyWasCutOff)
            #expect(answer.body.count <= 1)
            #expect(answer.header("content-type") == "application/json", "the whole head is kept")
        }

        /// 204 and 304 have no body whatever their Content-Length says (a 304 states the length
        /// of the representation it stands for): the answer is whole, not cut off at the cap.
        @Test(arguments: [204, 304])
        func aBodylessAnswerIsNotCutOffByItsContentLength(status: Int) async throws {
            let server = try RawTestServer { connection in
                _ = connection.readRequest()
                connection.write("HTTP/1.1 \(status) Whatever\r\nETag: \"e\"\r\nContent-Length: \(2 << 20)\r\n\r\n")
                connection.waitForClose()
            }
            defer { server.stop() }
            let result = await transport.send(Self.request(Self.url(server.port), timeout: .seconds(30)))
            let answer = try #require(result.answer, "\(result)")
            #expect(answer.status == status)
            #expect(!answer.bodyWasCutOff && answer.body.isEmpty)
        }

        @Test func aStreamedBodyStopsAtTheCap() async throws {
            let server = try RawTestServer { connection in
                _ = connection.readRequest()
                // No length: the body runs until the connection closes, which it never does.
                connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")
                let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1_024)
                for _ in 0..<(HTTPAnswer.maximumBodyBytes / chunk.count + 8) where connection.write(chunk) {}
                connection.waitForClose()
            }
            defer { server.stop() }
            let result = await transport.send(Self.request(Self.url(server.port), timeout: .seconds(30)))
            let answer = try #require(result.answer, "\(result)")
            #expect(answer.bodyWasCutOff)
            #expect(answer.body.count == HTTPAnswer.maximumBodyBytes)
            #expect(answer.body.allSatisfy { $0 == UInt8(ascii: "x") })
        }

        @Test func aBodyOfExactlyTheCapIsKeptWhole() async throws {
            let server = try RawTestServer { connection in
                _ = connection.readRequest()
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(HTTPAnswer.maximumBodyBytes)\r\n\r\n")
                connection.write([UInt8](repeating: UInt8(ascii: "y"), count: HTTPAnswer.maximumBodyBytes))
                connection.waitForClose()
            }
            defer { server.stop() }
            let result = await transport.send(Self.request(Self.url(server.port), timeout: .seconds(30)))
            let answer = try #require(result.answer, "\(result)")
            #expect(!answer.bodyWasCutOff)
            #expect(answer.body.count == HTTPAnswer.maximumBodyBytes)
        }

        /// libcurl would decompress a gzip transfer coding on the server's word alone; no answer
        /// here is asked for compressed, so it is refused before its body is read.
        @Test func aCompressedTransferCodingIsRefused() async throws {
            // `{"ok":true}` gzipped, sent as one chunk.
            let gzip: [UInt8] = [
                0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xFF, 0xAB, 0x56, 0xCA, 0xCF, 0x56, 0xB2,
                0x2A, 0x29, 0x2A, 0x4D, 0xAD, 0x05, 0x00, 0x90, 0x5F, 0xD4, 0xA7, 0x0B, 0x00, 0x00, 0x00,
            ]
            let server = try RawTestServer { connection in
                _ = connection.readRequest()
                connection.write(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                        + String(gzip.count, radix: 16) + "\r\n")
                connection.write(gzip)
                connection.write("\r\n0\r\n\r\n")
                connection.waitForClose()
            }
            defer { server.stop() }
            let result = await transport.send(Self.request(Self.url(server.port), timeout: .seconds(30)))
            guard case .notHTTP(let detail) = result else {
                Issue.record("a gzip transfer coding was read: \(result)")
                return
            }
            #expect(detail.contains("transfer coding"))
        }

        /// A status line with no space after the code (`200OK`, which libcurl reads as a final
        /// 200) gets the same checks at the end of its head: the gzip coding is refused, not
        /// decompressed into the body cap. A tab there is read as the answer it is.
        @Test func aStatusLineWithoutASpaceAfterTheCodeIsCheckedAsAnyOther() async throws {
            let server = try RawTestServer { connection in
                _ = connection.readRequest()
                connection.write(
                    "HTTP/1.1 200OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                        + "4\r\nabcd\r\n0\r\n\r\n")
                connection.waitForClose()
            }
            defer { server.stop() }
            let result = await transport.send(Self.request(Self.url(server.port), timeout: .seconds(30)))
            guard case .notHTTP(let detail) = result else {
                Issue.record("a gzip transfer coding after 200OK was read: \(result)")
                return
            }
            #expect(detail.contains("transfer coding"), "\(detail)")

            let tabbed = try RawTestServer { connection in
                _ = connection.readRequest()
                connection.write("HTTP/1.1 200\tOK\r\nContent-Length: 2\r\n\r\nok")
                connection.waitForClose()
            }
            defer { tabbed.stop() }
            let answer = await transport.send(Self.request(Self.url(tabbed.port), timeout: .seconds(30)))
            guard case .answer(let read) = answer else {
                Issue.record("an answer with 200<TAB>OK was not read: \(answer)")
                return
            }
            #expect(read.status == 200 && read.body == Data("ok".utf8))
        }

        /// One header line over libcurl's own 100 KiB limit never reaches the head's count:
        /// libcurl refuses it as out of memory. It is a head over the limit all the same.
        @Test func oneHeaderLineOverLibcurlsLimitIsRefusedAsAHeadTooLong() async throws {
            let server = try RawTestServer { connection in
                _ = connection.readRequest()
                connection.write(
                    "HTTP/1.1 200 OK\r\nX-Long: \(String(repeating: "l", count: 120 * 1024))\r\n"
                        + "Content-Length: 2\r\n\r\nok")
                connection.waitForClose()
            }
            defer { server.stop() }
            let result = await transport.send(Self.request(Self.url(server.port), timeout: .seconds(30)))
            guard case .notHTTP(let detail) = result else {
                Issue.record("a 120 KiB header line was not refused as not HTTP: \(result)")
                return
            }
            #expect(detail.contains("\(HTTPAnswer.maximumHeadBytes) bytes"), "\(detail)")
        }

        /// An answer without a body may name any transfer coding (RFC 9112 §6.1): it is read.
        @Test func aBodilessAnswerWithATransferCodingIsRead() async throws {
            let server = try RawTestServer { connection in
                while connection.readRequest() != nil {
                    connection.write("HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: gzip, chunked\r\n\r\n")
                }
            }
            defer { server.stop() }
            let result = await transport.send(Self.request(Self.url(server.port), timeout: .seconds(30)))
            #expect(result.answer?.status == 304, "\(result)")
        }

        /// A head of 100,000 bytes (libcurl itself allows 300 KiB) is refused as not HTTP, not
        /// reported as a lost connection.
        @Test func anAnswerHeadOverTheLimitIsRefused() async throws {
            let server = try RawTestServer { connection in
                _ = connection.readRequest()
                let filler = String(repeating: "X-Filler: \(String(repeating: "f", count: 40))\r\n", count: 2_000)
                connection.write("HTTP/1.1 200 OK\r\n" + filler + "Content-Length: 2\r\n\r\nok")
                connection.waitForClose()
            }
            defer { server.stop() }
            let result = await transport.send(Self.request(Self.url(server.port), timeout: .seconds(30)))
            guard case .notHTTP(let detail) = result else {
                Issue.record("a 100 KB head was read: \(result)")
                return
            }
            #expect(detail.contains("\(HTTPAnswer.maximumHeadBytes) bytes"))
        }

        /// A user name and password in the URL would go to the backend as a Basic authorization;
        /// the request is refused before any connection, and the refusal does not show the password.
        @Test func aURLWithUserInformationIsRefused() async throws {
            let server = try RawTestServer { connection in
                while connection.readRequest() != nil { connection.write(Self.okAnswer) }
            }
            defer { server.stop() }
            // %E9 is no UTF-8: decoded, the name would read as none.
            for text in [
                "http://user:s3cret@127.0.0.1:\(server.port)/", "http://user@127.0.0.1:\(server.port)/",
                "http://%E9@127.0.0.1:\(server.port)/",
            ] {
                let result = await transport.send(Self.request(try #require(URL(string: text))))
                #expect(result.failureKind == .invalidURL, "\(text): \(result)")
                #expect(!"\(result)".contains("s3cret") && !"\(result)".contains("user@"), "\(result)")
            }
            #expect(server.counters.accepted == 0)
        }

        @Test func aRedirectIsReturnedNotFollowed() async throws {
            let elsewhere = try RawTestServer { connection in
                while connection.readRequest() != nil { connection.write(Self.okAnswer) }
            }
            defer { elsewhere.stop() }
            let redirecting = try RawTestServer { connection in
                while connection.readRequest() != nil {
                    connection.write(
                        "HTTP/1.1 307 Temporary Redirect\r\n"
                            + "Location: http://127.0.0.1:\(elsewhere.port)/stolen\r\nContent-Length: 0\r\n\r\n")
                }
            }
            defer { redirecting.stop() }
            let url = Self.url(redirecting.port, "/nevisfido/devices/outofbandoperations/d")
            let result = await transport.send(
                Self.request(url, headers: ["Device-Signature": "header.payload.signature"]))
            let answer = try #require(result.answer, "\(result)")
            #expect(answer.status == 307)
            #expect(answer.header("location") == "http://127.0.0.1:\(elsewhere.port)/stolen")
            #expect(redirecting.counters.heads.first?.contains("Device-Signature: header.payload.signature") == true)
            #expect(elsewhere.counters.accepted == 0, "the other listener never sees a connection")
        }

        @Test func plainHTTPToAnotherHostIsRefusedBeforeAnyConnection() async throws {
            for url in ["http://fetchchannel.invalid:8080/", "http://10.0.0.1/", "ftp://127.0.0.1/", "http:///nohost"] {
                let result = await transport.send(Self.request(URL(string: url)!))
                let kind = result.failureKind
                #expect(kind == .insecureTransport || kind == .invalidURL, "\(url): \(result)")
            }
            let insecure = await transport.send(Self.request(URL(string: "http://fetchchannel.invalid/")!))
            #expect(
                insecure.failureKind == .insecureTransport, "refused before a name lookup (that would be hostNotFound)")
        }

        @Test func aRequestIsNeverSentTwice() async throws {
            // The first request on the connection is answered and kept alive; the second is read and
            // the connection closed without an answer, as a backend that crashed would do.
            let server = try RawTestServer { connection in
                guard connection.readRequest() != nil else { return }
                connection.write(Self.okAnswer)
                _ = connection.readRequest()
            }
            defer { server.stop() }
            let first = await transport.send(Self.request(Self.url(server.port)))
            #expect(first.answer?.status == 200, "\(first)")
            let second = await transport.send(
                Self.request(Self.url(server.port), headers: ["Device-Signature": "once"]))
            #expect(second.failureKind == .connectionLost, "\(second)")
            // libcurl opens a new connection to send it again; the transport stops it before it sends.
            #expect(server.counters.requests == 2, "libcurl's resend on a new connection is refused")
        }

        @Test func headerFieldsThatWouldSplitTheRequestAreRefused() async throws {
            let server = try RawTestServer { connection in
                while connection.readRequest() != nil { connection.write(Self.okAnswer) }
            }
            defer { server.stop() }
            let injections: [[String: String]] = [
                ["Device-Signature": "a\r\nX-Injected: 1"], ["Accept": "x\ny"], ["Bad Name": "v"], ["X-Nul": "a\u{0}b"],
                ["": "v"],
            ]
            for headers in injections {
                let result = await transport.send(Self.request(Self.url(server.port), headers: headers))
                #expect(result.failureKind == .other, "\(headers): \(result)")
            }
            #expect(server.counters.accepted == 0)
            let clean = await transport.send(Self.request(Self.url(server.port), headers: ["X-Empty": ""]))
            #expect(clean.answer?.status == 200)
            let head = try #require(server.counters.heads.first)
            #expect(head.contains("X-Empty:"), "an empty value is sent as an empty field")
            #expect(
                !head.contains("Accept:") && !head.contains("Expect:"), "no field the caller did not ask for: \(head)")
        }

        /// A POST without a body is sent with an empty one, and without the form Content-Type
        /// libcurl adds to a POST that names none.
        @Test func aPostWithoutABodyCarriesNoContentTypeOfLibcurls() async throws {
            let server = try RawTestServer { connection in
                while connection.readRequest() != nil { connection.write(Self.okAnswer) }
            }
            defer { server.stop() }
            let result = await transport.send(Self.request(Self.url(server.port), method: "POST"))
            #expect(result.answer?.status == 200, "\(result)")
            let head = try #require(server.counters.heads.first).lowercased()
            #expect(head.hasPrefix("post / "), "\(head)")
            #expect(head.contains("content-length: 0"), "\(head)")
            #expect(!head.contains("content-type"), "no field the caller did not ask for: \(head)")
        }

        @Test func eightBackendsAreAskedAtOnce() async throws {
            // Every server holds its answer until all eight requests have arrived: a transport that
            // sent them one after another would make the first wait for the others (and fail).
            let arrivals = Arrivals(expected: 8)
            var servers: [RawTestServer] = []
            defer { servers.forEach { $0.stop() } }
            for _ in 0..<8 {
                servers.append(
                    try RawTestServer { connection in
                        guard connection.readRequest() != nil else { return }
                        let alone = "HTTP/1.1 503 Alone\r\nContent-Length: 0\r\n\r\n"
                        connection.write(arrivals.arriveAndWait() ? Self.okAnswer : alone)
                        connection.waitForClose()
                    })
            }
            let transport = self.transport
            let statuses = await withTaskGroup(of: Int?.self) { group in
                for server in servers {
                    group.addTask {
                        await transport.send(Self.request(Self.url(server.port), timeout: .seconds(90))).answer?.status
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 8))
        }

        @Test func theFetchClientRunsOnTheCurlTransport() async throws {
            #expect(DefaultTransport.make() is CurlTransport)
            #expect(DefaultTransport.make() as? CurlTransport === CurlTransport.shared, "one transport for the process")
        }
    }

    /// A barrier for the eight-backend test: each server thread waits until all have arrived (or
    /// ``CurlTransportTests/noHangBound``, then it answers 503).
    final class Arrivals: Sendable {
        private let condition = NSCondition()
        private let count = Locked(0)
        private let expected: Int

        init(expected: Int) {
            self.expected = expected
        }

        func arriveAndWait() -> Bool {
            condition.lock()
            defer { condition.unlock() }
            count.withLock { $0 += 1 }
            condition.broadcast()
            let deadline = Date().addingTimeInterval(Double(CurlTransportTests.noHangBound.components.seconds))
            while count.withLock({ $0 }) < expected {
                guard condition.wait(until: deadline) else { return false }
            }
            return true
        }
    }

    extension TransportResult {
        var answer: HTTPAnswer? {
            if case .answer(let answer) = self { return answer }
            return nil
        }

        var failureKind: NetworkFailure.Kind? {
            if case .failure(let failure) = self { return failure.kind }
            return nil
        }

        var failureDetail: String? {
            if case .failure(let failure) = self { return failure.detail }
            return nil
        }
    }
#endif

import DeviceSigning
import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

extension CLISubprocessTests {
    /// `fetchchannel skew` against reference backends whose clocks are in step or ten minutes ahead.
    @Suite struct SkewProcessTests {
        @Test func aBackendTenMinutesAheadIsReportedWithWhatToDo() async throws {
            let backend = try ReferenceBackend.start(.init(clockOffsetMillis: 600_000))
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(
                ["skew", "--server", backend.baseURL.absoluteString, "--json"], passphrase: nil)
            #expect(result.status == 1, "beyond the tolerance: \(result.summary)")
            let object = try #require(try result.json() as? [String: Any], "\(result.summary)")
            let offset = try #require(object["offsetMillis"] as? Int)
            // ±0.5 s of Date resolution and the requests' time in flight, which a sanitizer run stretches.
            #expect(abs(offset - 600_000) <= 2_000 * LooseTimeBounds.scale, "\(offset)")
            #expect(object["withinTolerance"] as? Bool == false && object["toleranceMillis"] as? Int == 60_000)
            #expect(object["measured"] as? Bool == true, "\(result.summary)")
            #expect((object["samplesMillis"] as? [Int])?.count == 3)
            // 10 min, or 10 min 1 s when the samples met a Date's second boundary (600,500 ms).
            #expect(
                result.err.contains("Error: The device clock is 10 min ")
                    && result.err.contains(" behind \(backend.baseURL.absoluteString) (allowed: 60 s)"),
                "\(result.summary)")
            #expect(result.err.contains("Set the clock automatically"))
        }

        @Test func aBackendInStepIsWithinTheTolerance() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(
                ["skew", "--server", backend.baseURL.absoluteString, "--samples", "2"], passphrase: nil)
            #expect(result.status == 0, "\(result.summary)")
            let line = try #require(result.lines.first)
            #expect(
                result.lines.count == 1 && line.hasSuffix("ms (server minus device, median of 2 samples)"),
                "\(result.summary)")
            let millis = try #require(Int(line.prefix { $0 != " " }.replacingOccurrences(of: "+", with: "")))
            #expect(abs(millis) <= 1_500 * LooseTimeBounds.scale, "\(millis)")
            #expect(result.err.contains("within the allowed 60 s"))
        }

        /// With SSLKEYLOGFILE set, libcurl would create that file (0644) at its set-up and append
        /// every connection's TLS secrets to it; no request is made at all instead.
        @Test func aKeyLogFileInTheEnvironmentStopsEveryRequest() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyLog = sandbox.file("tls-secrets.log")
            let result = try await sandbox.run(
                ["skew", "--server", backend.baseURL.absoluteString], passphrase: nil,
                extra: ["SSLKEYLOGFILE": keyLog.path])
            #expect(result.status == 1 && result.err.contains("SSLKEYLOGFILE is set"), "\(result.summary)")
            #expect(!FileManager.default.fileExists(atPath: keyLog.path), "libcurl opened the key log")
            #expect(backend.serverStatistics.totalRequests == 0)
        }

        /// Standard output of `skew --json` when nothing was measured: one `{"measured": false, "server",
        /// "code", "message"}` object, the exit status 1 and the error on standard error as without --json.
        func expectMeasurementFailureJSON(_ result: CLIResult, server: String, messagePrefix: String) throws {
            #expect(result.status == 1 && result.err.hasPrefix("Error: \(messagePrefix)"), "\(result.summary)")
            let object = try #require(try result.json() as? [String: Any], "\(result.summary)")
            #expect(object["measured"] as? Bool == false, "\(result.summary)")
            #expect(
                object["server"] as? String == server && object["code"] as? String == "backend", "\(result.summary)")
            #expect((object["message"] as? String)?.hasPrefix(messagePrefix) == true, "\(result.summary)")
            #expect(object["offsetMillis"] == nil && result.lines.count == 1, "\(result.summary)")
        }

        @Test func jsonSaysSoWhenTheConnectionIsRefused() async throws {
            let backend = try ReferenceBackend.start()
            let server = backend.baseURL.absoluteString
            backend.stop()
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(["skew", "--server", server, "--json"], passphrase: nil)
            try expectMeasurementFailureJSON(result, server: server, messagePrefix: "no answer from")
        }

        /// Answers without a Date header (a bare HTTP head) or that are not HTTP at all.
        @Test(arguments: ["HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "garbage\r\n\r\n"])
        func jsonSaysSoWhenNoAnswerIsUsable(answer: String) async throws {
            let server = HTTPServer { _ in .rawBytes(Array(answer.utf8), thenClose: true) }
            defer { server.stop() }
            let url = try server.start().baseURL.absoluteString
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(
                ["skew", "--server", url, "--json", "--samples", "1"], passphrase: nil)
            let prefix = answer.hasPrefix("HTTP") ? "cannot measure the clock offset to" : "\(url) did not answer"
            try expectMeasurementFailureJSON(result, server: url, messagePrefix: prefix)
        }

        /// A backend that sends an answer's head but never its last byte: `--timeout-seconds` ends the
        /// wait. The server closes the connection after 5 s (its idle timeout), well before the
        /// default 15 s, so "timed out" comes from the option.
        @Test func timeoutSecondsBoundsEachRequest() async throws {
            let configuration = HTTPServer.Configuration(idleTimeout: LooseTimeBounds.scaled(.seconds(5)))
            let server = HTTPServer(configuration: configuration) { _ in .respondThenHang(.text(status: 200, "x")) }
            defer { server.stop() }
            let url = try server.start().baseURL.absoluteString
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(
                ["skew", "--server", url, "--samples", "1", "--timeout-seconds", "0.3"], passphrase: nil)
            #expect(
                result.status == 1 && result.err.hasPrefix("Error: no answer from \(url): timed out"),
                "\(result.summary)")
        }

        /// Two answers, then a request without one: the samples measured still count (exit 0,
        /// `"measured": true`). The failed request used to end the run with `"measured": false`,
        /// which is for nothing measured at all.
        @Test func samplesMeasuredBeforeAFailedRequestStillCount() async throws {
            let answered = Locked(0)
            let server = HTTPServer { _ in
                let earlier = answered.withLock { count in
                    defer { count += 1 }
                    return count
                }
                return earlier < 2 ? .respond(.text(status: 200, "ok")) : .closeWithoutAnswer
            }
            defer { server.stop() }
            let url = try server.start().baseURL.absoluteString
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(
                ["skew", "--server", url, "--samples", "4", "--json"], passphrase: nil)
            #expect(result.status == 0, "\(result.summary)")
            let object = try #require(try result.json() as? [String: Any], "\(result.summary)")
            #expect(object["measured"] as? Bool == true, "\(result.summary)")
            #expect((object["samplesMillis"] as? [Int])?.count == 2, "\(result.summary)")
            #expect(result.err.contains("2 of 4 samples could not be measured"), "\(result.summary)")
            #expect(answered.withLock { $0 } == 3, "the request without an answer ends the run")
        }

        @Test func noBackendIsARuntimeError() async throws {
            let backend = try ReferenceBackend.start()
            let server = backend.baseURL.absoluteString
            backend.stop()
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(["skew", "--server", server], passphrase: nil)
            #expect(
                result.status == 1 && result.out.isEmpty && result.err.hasPrefix("Error: no answer from"),
                "\(result.summary)")
        }
    }
}

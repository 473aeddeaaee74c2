import DeviceSigning
import FetchChannelTestSupport
import FetchChannelWire
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension CLISubprocessTests {
    /// `fetchchannel serve` as a child process: prints its URL, serves, stops cleanly on a signal.
    @Suite struct ServeProcessTests {
        /// Starts `serve` and waits for the first line of standard output.
        func startServe(_ arguments: [String], sandbox: CLISandbox) async throws -> (CLIProcess, String) {
            let child = try CLIProcess(["serve"] + arguments, environment: sandbox.environment(passphrase: nil))
            try child.start()
            let deadline = Date().addingTimeInterval(20)
            while !child.outputSoFar.contains("\n") && child.process.isRunning && Date() < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let line = child.outputSoFar.split(separator: "\n").first.map(String.init) ?? ""
            return (child, line)
        }

        func get(_ url: URL) async throws -> (Int, HTTPURLResponse?) {
            let (_, response) = try await URLSession(configuration: .ephemeral).data(from: url)
            let http = response as? HTTPURLResponse
            return (http?.statusCode ?? 0, http)
        }

        @Test func printsItsURLAndStopsOnSIGTERM() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let (child, line) = try await startServe(["--port", "0"], sandbox: sandbox)
            let url = try #require(URL(string: line), "no URL on stdout: \(line)")
            #expect(line.hasPrefix("http://127.0.0.1:") && url.port != 0, "\(line)")
            let (status, _) = try await get(url.appendingPathComponent("_emulator/stats"))
            #expect(status == 200)

            child.process.terminate()  // SIGTERM
            let result = await child.waitForExit()
            #expect(result.status == 0, "\(result.summary)")
            #expect(child.process.terminationReason == .exit, "it exited, it was not killed by the signal")
            #expect(result.err.contains("Received SIGTERM") && result.err.contains("stopped"), "\(result.summary)")
            #expect(result.lines == [line], "stdout holds the URL only")
            // Nothing listens any more.
            await #expect(throws: (any Error).self) { _ = try await get(url.appendingPathComponent("_emulator/stats")) }
        }

        @Test func jsonAndClockOffsetAndSIGINT() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let (child, line) = try await startServe(
                ["--json", "--clock-offset-seconds", "600", "--tolerance-seconds", "30"], sandbox: sandbox)
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            #expect(object["toleranceSeconds"] as? Double == 30 && object["clockOffsetSeconds"] as? Double == 600)
            let url = try #require((object["url"] as? String).flatMap(URL.init(string:)))
            // The server's Date header runs ten minutes ahead of this clock.
            let (_, response) = try await get(url.appendingPathComponent("_emulator/stats"))
            let date = try #require(response?.value(forHTTPHeaderField: "Date").flatMap(HTTPDate.parseMillis))
            let offset = Double(date - SystemWallClock().nowMillis()) / 1000
            #expect(abs(offset - 600) < 5, "Date is \(offset) s ahead")

            child.process.interrupt()  // SIGINT, as Ctrl-C
            let result = await child.waitForExit()
            #expect(result.status == 0 && result.err.contains("Received SIGINT"), "\(result.summary)")
        }

        /// Runs a tool on a thread of its own (a blocking subprocess), standard input closed;
        /// returns its exit status, standard output and standard error.
        func tool(_ path: String, _ arguments: [String]) async throws -> (status: Int32, out: String, err: String) {
            let result = try await DedicatedThreads.run { try ExternalTool.run(path, arguments) }
            return (result.status, result.output, result.errors)
        }

        /// curl with a 10 s limit; returns its exit status and standard output.
        func curl(_ arguments: [String]) async throws -> (Int32, String) {
            let result = try await tool("/usr/bin/curl", ["-sS", "--max-time", "10"] + arguments)
            return (result.status, result.out)
        }

        static let tlsToolsInstalled = ["/usr/bin/curl", "/usr/bin/openssl"].allSatisfy {
            FileManager.default.isExecutableFile(atPath: $0)
        }

        /// `serve --tls --json` with its CA file under the sandbox; returns the child and its JSON line.
        func startTLSServe(sandbox: CLISandbox) async throws -> (CLIProcess, [String: Any], String) {
            let environment = sandbox.environment(passphrase: nil, extra: ["TMPDIR": sandbox.root.path])
            let child = try CLIProcess(["serve", "--tls", "--json"], environment: environment)
            try child.start()
            let deadline = Date().addingTimeInterval(20)
            while !child.outputSoFar.contains("\n") && child.process.isRunning && Date() < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let line = child.outputSoFar.split(separator: "\n").first.map(String.init) ?? ""
            let parsed = try? JSONSerialization.jsonObject(with: Data(line.utf8))
            return (child, try #require(parsed as? [String: Any], "\(line)"), line)
        }

        @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl"), "needs /usr/bin/curl"))
        func tlsJSONGivesTheCAFileAndThePin() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let (child, object, line) = try await startTLSServe(sandbox: sandbox)
            let url = try #require(object["url"] as? String)
            let caFile = try #require(object["caFile"] as? String)
            let pin = try #require(object["pin"] as? String)
            #expect(url.hasPrefix("https://127.0.0.1:"), "\(line)")
            #expect(object["toleranceSeconds"] as? Double == 60 && object["clockOffsetSeconds"] as? Double == 0)
            #expect(caFile.hasPrefix(sandbox.root.path) && pin.hasPrefix("sha256//"), "\(line)")
            #expect(try TestPaths.mode(URL(fileURLWithPath: caFile)) == 0o644)
            #expect(try TestPaths.mode(URL(fileURLWithPath: caFile).deletingLastPathComponent()) == 0o700)

            let (status, body) = try await curl(["--cacert", caFile, "--pinnedpubkey", pin, url + "/_emulator/stats"])
            #expect(status == 0 && body.contains("requests"), "curl exit \(status): \(body)")

            child.process.terminate()
            let result = await child.waitForExit()
            #expect(result.status == 0, "\(result.summary)")
            #expect(result.err.contains(caFile) && result.err.contains(pin), "\(result.summary)")
            #expect(!FileManager.default.fileExists(atPath: caFile), "the CA file is removed on stop")
        }

        /// The README's checks of `serve --tls` with the CA file alone: curl and openssl s_client
        /// verify the chain (and the name) against it.
        @Test(
            .enabled(
                if: Self.tlsToolsInstalled,
                "needs /usr/bin/curl and /usr/bin/openssl (apt-get install curl openssl)"))
        func curlAndOpenSSLTrustServeTLSWithItsCAFile() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let (child, object, line) = try await startTLSServe(sandbox: sandbox)
            let url = try #require(object["url"] as? String, "\(line)")
            let caFile = try #require(object["caFile"] as? String, "\(line)")
            let port = try #require(URL(string: url)?.port, "\(line)")

            let (status, body) = try await curl(["--cacert", caFile, url + "/_emulator/stats"])
            #expect(status == 0 && body.contains("requests"), "curl --cacert: exit \(status): \(body)")
            let untrusted = try await curl([url + "/_emulator/stats"])
            #expect(untrusted.0 == 60, "without the CA file curl refuses the chain: exit \(untrusted.0)")

            let sClient = try await tool(
                "/usr/bin/openssl",
                [
                    "s_client", "-connect", "127.0.0.1:\(port)", "-CAfile", caFile, "-verify_return_error",
                    "-verify_ip", "127.0.0.1", "-brief",
                ])
            #expect(
                sClient.status == 0 && sClient.err.contains("Verification: OK"),
                "openssl s_client: exit \(sClient.status): \(sClient.err)")

            child.process.terminate()
            let result = await child.waitForExit()
            #expect(result.status == 0, "\(result.summary)")
        }

        @Test func tlsCertWithoutKeyIsAUsageError() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(["serve", "--tls-cert", "cert.pem"], passphrase: nil)
            #expect(result.status == 64 && result.out.isEmpty && result.err.contains("--tls-key"), "\(result.summary)")
        }

        @Test func refusesANonLoopbackHostAtRuntime() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(["serve", "--host", "0.0.0.0"], passphrase: nil)
            #expect(
                result.status == 1 && result.out.isEmpty
                    && result.err.hasPrefix("Error: cannot start the reference backend"), "\(result.summary)")
        }
    }
}

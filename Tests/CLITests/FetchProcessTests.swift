import FetchChannelEmulator
import FetchChannelTestSupport
import Foundation
import Testing

extension CLISubprocessTests {
    /// `fetchchannel fetch` and `redeem` against three reference backends in this process: one
    /// healthy, one ten minutes ahead, one stopped.
    @Suite struct FetchProcessTests {
        /// Registers a new key of the sandbox with `backend` for `deviceId`; returns the key id.
        func register(_ sandbox: CLISandbox, _ backend: ReferenceBackend, deviceId: String) async throws -> String {
            let keyId = try await sandbox.generateKey()
            let result = try await sandbox.run(
                [
                    "register", "--server", backend.baseURL.absoluteString, "--device-id", deviceId,
                    "--key", keyId,
                ] + sandbox.storeArguments)
            try #require(result.status == 0, "\(result.summary)")
            return keyId
        }

        @Test func partialResultsAndTypedErrors() async throws {
            let healthy = try ReferenceBackend.start()
            defer { healthy.stop() }
            let skewed = try ReferenceBackend.start(.init(clockOffsetMillis: 600_000))
            defer { skewed.stop() }
            let gone = try ReferenceBackend.start()
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let healthyKey = try await register(sandbox, healthy, deviceId: "phone")
            _ = try await register(sandbox, skewed, deviceId: "phone")
            let goneKey = try await register(sandbox, gone, deviceId: "phone")
            gone.stop()
            let push = try healthy.dispatch(deviceId: "phone", channel: "firebase-cloud-messaging")
            let qr = try healthy.dispatch(deviceId: "phone", channel: "png-qr-code")
            let link = try healthy.dispatch(deviceId: "phone", channel: "link")
            _ = try healthy.dispatch(deviceId: "phone", channel: "sms")

            // Every registered key: the healthy backend's operations plus one typed error per failing backend.
            let all = try await sandbox.run(["fetch", "--json"] + sandbox.storeArguments)
            #expect(all.status == 2, "partial: \(all.summary)")
            let object = try #require(try all.json() as? [String: Any], "\(all.summary)")
            let operations = try #require(object["operations"] as? [[String: Any]])
            let tokens = operations.compactMap {
                ($0["payload"] as? [String: Any]).flatMap { $0["redeemData"] as? [String: Any] }?["token"] as? String
            }
            #expect(
                tokens == [push.token, qr.token, link.token],
                "oldest first, the unknown channel outside the accessibility policy")
            #expect(operations.allSatisfy { $0["server"] as? String == healthy.baseURL.absoluteString })
            let errors = try #require(object["errors"] as? [[String: Any]])
            #expect(Set(errors.compactMap { $0["code"] as? String }) == ["clockSkewTooBig", "networkError"])
            let skew = try #require(errors.first { $0["code"] as? String == "clockSkewTooBig" })
            #expect(skew["server"] as? String == skewed.baseURL.absoluteString)
            let measured = try #require(skew["measuredOffsetMillis"] as? Int)
            // ±0.5 s of Date resolution and the request's time in flight, which a sanitizer run stretches.
            #expect(abs(measured - 600_000) <= 2_000 * LooseTimeBounds.scale, "\(measured)")
            #expect(skew["toleranceMillis"] as? Int == 60_000)
            #expect((skew["message"] as? String)?.contains("10 min behind") == true)
            let network = try #require(errors.first { $0["code"] as? String == "networkError" })
            #expect(
                network["server"] as? String == gone.baseURL.absoluteString
                    && network["networkKind"] as? String == "connectionRefused")

            // A partial result whose document cannot be written is a failure that says so.
            let lost = try await sandbox.run(
                ["fetch", "--json"] + sandbox.storeArguments, standardOutputPath: "/dev/full")
            #expect(lost.status == 1 && lost.err.contains("cannot write to standard output"), "\(lost.summary)")

            // The same as a table, errors on standard error.
            let text = try await sandbox.run(["fetch"] + sandbox.storeArguments)
            #expect(text.status == 2)
            #expect(text.lines.first?.hasPrefix("CREATED") == true && text.lines.count == 4, "\(text.summary)")
            #expect(
                text.lines[1].contains("firebase-cloud-messaging")
                    && text.lines[1].contains(String(push.token.prefix(8)) + "…"))
            #expect(!text.out.contains(push.token), "only a token prefix in the table")
            #expect(
                text.err.contains("error: clockSkewTooBig from \(skewed.baseURL.absoluteString)"), "\(text.summary)")
            #expect(text.err.contains("error: networkError from \(gone.baseURL.absoluteString)"))

            // One healthy key: exit 0; push-only shows only the push operation.
            let pushOnly = try await sandbox.run(
                ["fetch", "--json", "--policy", "push-only", "--key", healthyKey] + sandbox.storeArguments)
            #expect(pushOnly.status == 0, "\(pushOnly.summary)")
            let pushOperations = try #require(
                (try pushOnly.json() as? [String: Any])?["operations"] as? [[String: Any]])
            #expect(
                pushOperations.count == 1
                    && pushOperations.first?["dispatchChannel"] as? String == "firebase-cloud-messaging")

            // Only the stopped backend: everything failed, exit 1.
            let none = try await sandbox.run(["fetch", "--key", goneKey] + sandbox.storeArguments)
            #expect(none.status == 1 && none.out.isEmpty, "\(none.summary)")
            #expect(none.err.contains("Error: no backend answered"), "an exit 1 says Error: \(none.summary)")
        }

        /// A hand-edited record is that backend's error, and the other keys are still asked.
        /// Before, a stored pin that is not a pin stopped the whole fetch before any request, and
        /// a stored URL with user info (which register refuses) was used as it was.
        @Test func anUnusableStoredRegistrationIsOnlyItsOwnError() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            _ = try await register(sandbox, backend, deviceId: "phone")
            let badPin = try await register(sandbox, backend, deviceId: "tablet")
            let withPassword = try await register(sandbox, backend, deviceId: "watch")
            let port = try #require(backend.baseURL.port)
            for (keyId, member, value) in [
                (badPin, "serverPins", ["sha256//bad"] as Any),
                (withPassword, "server", "http://user:s3cret@127.0.0.1:\(port)" as Any),
            ] {
                let record = URL(fileURLWithPath: sandbox.store).appendingPathComponent("\(keyId).json")
                var object = try #require(
                    try JSONSerialization.jsonObject(with: Data(contentsOf: record)) as? [String: Any])
                object[member] = value
                try JSONSerialization.data(withJSONObject: object).write(to: record)
            }
            let pending = try backend.dispatch(deviceId: "phone", channel: "link")
            let requestsBefore = backend.serverStatistics.totalRequests

            let result = try await sandbox.run(["fetch", "--json"] + sandbox.storeArguments)
            #expect(result.status == 2, "partial: \(result.summary)")
            let object = try #require(try result.json() as? [String: Any], "\(result.summary)")
            let operations = try #require(object["operations"] as? [[String: Any]])
            #expect(operations.count == 1 && result.out.contains(pending.token), "\(result.summary)")
            let errors = try #require(object["errors"] as? [[String: Any]])
            #expect(errors.count == 2 && errors.allSatisfy { $0["code"] as? String == "networkError" })
            #expect(errors.contains { ($0["message"] as? String)?.contains("unusable TLS trust") == true })
            #expect(
                errors.contains { ($0["message"] as? String)?.contains("must not contain user information") == true },
                "the URL's own problem is named: \(errors)")
            #expect(!result.out.contains("s3cret") && !result.err.contains("s3cret"), "\(result.summary)")
            let store = sandbox.storeArguments
            for shown in [["key", "list"] + store, ["key", "show"] + store + ["--", withPassword]]
                + [["key", "show", "--json"] + store + ["--", withPassword]]
            {
                let output = try await sandbox.run(shown)
                #expect(output.status == 0 && !output.out.contains("s3cret"), "\(output.summary)")
            }
            #expect(backend.serverStatistics.totalRequests == requestsBefore + 1, "only the usable key asked")
            // Refusals and notes that name the stored server show it without its password.
            for named in [
                ["register", "--server", "https://127.0.0.1:9", "--device-id", "w", "--key", withPassword] + store,
                ["rotate", "--key", withPassword] + store, ["key", "delete"] + store + ["--", withPassword],
            ] {
                let output = try await sandbox.run(named)
                #expect(output.err.contains("127.0.0.1"), "the server is named: \(output.summary)")
                #expect(!output.out.contains("s3cret") && !output.err.contains("s3cret"), "\(output.summary)")
            }
        }

        /// A record that cannot be read (here: open to others) is its own error: the other keys
        /// are still fetched, listed and found by a prefix. Before, every command that listed the
        /// store stopped at it. Commands that decide on the whole store (redeem's trust) still refuse.
        @Test func anUnreadableRecordIsOnlyItsOwnError() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let good = try await register(sandbox, backend, deviceId: "phone")
            let bad = try await register(sandbox, backend, deviceId: "tablet")
            let record = URL(fileURLWithPath: sandbox.store).appendingPathComponent("\(bad).json")
            try #require(chmod(record.path, 0o644) == 0)
            let pending = try backend.dispatch(deviceId: "phone", channel: "link")

            let fetched = try await sandbox.run(["fetch", "--json"] + sandbox.storeArguments)
            #expect(fetched.status == 2, "partial: \(fetched.summary)")
            let object = try #require(try fetched.json() as? [String: Any], "\(fetched.summary)")
            #expect(fetched.out.contains(pending.token), "the readable key was asked: \(fetched.summary)")
            let errors = try #require(object["errors"] as? [[String: Any]])
            #expect(errors.count == 1 && errors.first?["code"] as? String == "deviceProtectionError")
            let message = try #require(errors.first?["message"] as? String)
            #expect(message.contains(bad) && message.contains("chmod 600 \(record.path)"), "\(message)")
            // The first count is of the backends asked, the last of all: they agree.
            #expect(
                fetched.err.contains("Fetching from 1 backend (1 more cannot be asked: its error follows)…")
                    && fetched.err.contains("1 of 2 backends failed"), "\(fetched.summary)")
            // A key the passphrase does not open cannot be asked either: before, "Fetching from 0
            // backends…" was followed by "1 of 1 backend failed".
            let unopened = try await sandbox.run(
                ["fetch", "--key", good] + sandbox.storeArguments, passphrase: "not the passphrase")
            #expect(unopened.status == 1, "\(unopened.summary)")
            #expect(
                unopened.err.contains("Fetching from 0 backends (1 more cannot be asked: its error follows)…")
                    && unopened.err.contains("0 pending operations, 1 of 1 backend failed."),
                "\(unopened.summary)")

            let listed = try await sandbox.run(["key", "list"] + sandbox.storeArguments)
            #expect(listed.status == 1, "\(listed.summary)")
            #expect(listed.out.contains(good) && !listed.out.contains(bad), "\(listed.summary)")
            #expect(
                listed.err.contains("error: key \(bad) cannot be read") && listed.err.contains("Error: 1 key record"))
            let listedJSON = try await sandbox.run(["key", "list", "--json"] + sandbox.storeArguments)
            let listedKeys = try listedJSON.json() as? [Any]
            #expect(listedJSON.status == 1 && listedKeys?.count == 1, "\(listedJSON.summary)")

            let shown = try await sandbox.run(
                // A short prefix is not taken for a value: one in 64 starts with '-'.
                ["key", "show"] + sandbox.storeArguments + ["--", String(good.prefix(6))])
            #expect(shown.status == 0 && shown.out.contains(good), "found by a prefix: \(shown.summary)")
            let refused = try await sandbox.run(["key", "show"] + sandbox.storeArguments + ["--", bad])
            #expect(refused.status == 1 && refused.err.contains("chmod 600"), "\(refused.summary)")

            // Only the unreadable key's record is left: nothing is asked, everything failed.
            let deleted = try await sandbox.run(["key", "delete"] + sandbox.storeArguments + ["--", good])
            try #require(deleted.status == 0, "\(deleted.summary)")
            let none = try await sandbox.run(["fetch"] + sandbox.storeArguments)
            #expect(none.status == 1 && none.err.contains("Error: no backend answered"), "\(none.summary)")
            #expect(none.err.contains("key \(bad) was not asked"), "\(none.summary)")
        }

        @Test func redeemOnceThenAlreadyRedeemed() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let operation = try backend.dispatch(deviceId: "phone", channel: "link")

            let first = try await sandbox.run(
                ["redeem", "--redeem-url", operation.redeemURL, "--json", "--", operation.token], passphrase: nil)
            #expect(first.status == 0, "\(first.summary)")
            let answer = try #require(try first.json() as? [String: Any])
            #expect(
                answer["redeemed"] as? Bool == true && answer["op"] as? String == "Auth"
                    && answer["statusCode"] as? Int == 1200)

            let second = try await sandbox.run(
                ["redeem", "--redeem-url", operation.redeemURL, "--", operation.token], passphrase: nil)
            #expect(second.status == 1 && second.out.isEmpty, "\(second.summary)")
            #expect(second.err.hasPrefix("Error: This operation was already started"), "\(second.summary)")
            #expect(!second.err.contains(operation.token), "the token is not echoed")
            #expect(backend.statistics.redemptions[operation.token] == 1, "redeemed exactly once")
        }

        /// `redeem -` reads the token from standard input, so that it is in no process list or
        /// shell history: one line, its line ending not part of it; nothing else is taken.
        @Test func redeemReadsTheTokenFromStandardInput() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let operation = try backend.dispatch(deviceId: "phone", channel: "link")
            let refusedInputs = [
                ("", "standard input holds no token"), ("\n", "standard input holds no token"),
                ("\(operation.token)\nsecond", "more than one line"),
                (String(repeating: "t", count: 1_025), "longer than 1024 bytes"),
            ]
            for (input, reason) in refusedInputs {
                let refused = try await sandbox.run(
                    ["redeem", "--redeem-url", operation.redeemURL, "-"], passphrase: nil,
                    standardInput: Data(input.utf8))
                #expect(refused.status == 1 && refused.err.contains(reason), "\(refused.summary)")
            }
            #expect(backend.statistics.redemptions[operation.token] == nil, "nothing was sent")

            let redeemed = try await sandbox.run(
                ["redeem", "--redeem-url", operation.redeemURL, "--json", "-"], passphrase: nil,
                standardInput: Data("\(operation.token)\r\n".utf8))
            #expect(redeemed.status == 0, "\(redeemed.summary)")
            #expect(backend.statistics.redemptions[operation.token] == 1, "redeemed once, with the line's token")
        }

        /// An answer with a member name twice is refused for that, not as "not a JSON object".
        @Test func redeemSaysAnAnswerHasADuplicateMember() async throws {
            let server = HTTPServer { _ in .respond(.json(status: 200, Data(#"{"op":"Auth","op":"Reg"}"#.utf8))) }
            defer { server.stop() }
            let url = try server.start().baseURL.appendingPathComponent("redeem").absoluteString
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(
                ["redeem", "token-1", "--redeem-url", url, "--json"] + sandbox.storeArguments, passphrase: nil)
            #expect(result.status == 1, "\(result.summary)")
            let refusal = try #require(try result.json() as? [String: Any], "\(result.summary)")
            let message = try #require(refusal["message"] as? String, "\(result.summary)")
            #expect(refusal["redeemed"] as? Bool == false && refusal["code"] as? String == "unknown")
            #expect(
                message.contains(#"has a duplicate member: the member "op" appears more than once"#)
                    && !message.contains("not a JSON object"), "\(result.summary)")
            #expect(result.err.contains("has a duplicate member"), "\(result.summary)")
        }

        /// Each field of the backend's answer is printed on its own one line: a uafRequest with a
        /// line feed cannot add lines to standard output (before, it could append a fake `op: Reg`).
        @Test func redeemPrintsTheBackendsTextOnOneLineEach() async throws {
            let answer = #"{"op":"Auth","statusCode":1200,"lifetimeMillis":1000,"uafRequest":"[1]\nop: Reg\tx"}"#
            let server = HTTPServer { _ in .respond(.json(status: 200, Data(answer.utf8))) }
            defer { server.stop() }
            let url = try server.start().baseURL.appendingPathComponent("redeem").absoluteString
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(
                ["redeem", "--redeem-url", url] + sandbox.storeArguments + ["--", "token-1"], passphrase: nil)
            #expect(result.status == 0, "\(result.summary)")
            #expect(
                result.lines == ["op: Auth", "statusCode: 1200", "lifetimeMillis: 1000", "uafRequest: [1]?op: Reg?x"],
                "\(result.summary)")
        }

        /// The redeem URL goes out as the backend wrote it (a query and all); and a key store that
        /// does not read is an error, not a silent fall back to the system CAs in place of the CA
        /// file and pins a registration may store.
        @Test func redeemSendsTheURLAsGivenAndNeedsAReadableStore() async throws {
            let backend = try ReferenceBackend.start()
            defer { backend.stop() }
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let operation = try backend.dispatch(deviceId: "phone", channel: "link")
            _ = try await sandbox.generateKey()
            let unreadable = URL(fileURLWithPath: sandbox.store).appendingPathComponent(
                String(repeating: "A", count: 43) + ".json")
            #expect(
                FileManager.default.createFile(
                    atPath: unreadable.path, contents: Data("garbage".utf8), attributes: [.posixPermissions: 0o600]))
            let redeem = ["redeem", "--redeem-url", operation.redeemURL + "?tenant=a"]
            let token = ["--", operation.token]

            let refused = try await sandbox.run(redeem + sandbox.storeArguments + token, passphrase: nil)
            #expect(refused.status == 1 && refused.err.contains(unreadable.lastPathComponent), "\(refused.summary)")
            let refusedJSON = try await sandbox.run(
                redeem + ["--json"] + sandbox.storeArguments + token, passphrase: nil)
            let refusal = try #require(try refusedJSON.json() as? [String: Any], "\(refusedJSON.summary)")
            #expect(refusedJSON.status == 1 && refusal["redeemed"] as? Bool == false, "\(refusedJSON.summary)")
            #expect(refusal["code"] is String && refusal["message"] is String, "\(refusedJSON.summary)")
            #expect(backend.statistics.redemptions[operation.token] == nil, "nothing was sent")

            try FileManager.default.removeItem(at: unreadable)
            let redeemed = try await sandbox.run(redeem + sandbox.storeArguments + token, passphrase: nil)
            #expect(redeemed.status == 0, "\(redeemed.summary)")
            #expect(backend.statistics.redemptions[operation.token] == 1)
        }

        @Test func nothingRegistered() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            _ = try await sandbox.generateKey()
            let result = try await sandbox.run(["fetch"] + sandbox.storeArguments)
            #expect(result.status == 1 && result.err.contains("is registered with a backend"), "\(result.summary)")
        }
    }
}

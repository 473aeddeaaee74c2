import Foundation
import Testing

extension CLISubprocessTests {
    /// `fetchchannel demo`, the README's first command, as a newcomer runs it.
    @Suite struct DemoProcessTests {
        @Test func demoWalksThroughAndExitsZero() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(["demo"], passphrase: nil)
            #expect(result.status == 0, "\(result.summary)")
            // The skew is 7 min 12 s; the measured offset also holds the request's time in flight,
            // which on a loaded machine can round the message to 7 min 13 s.
            // The healthy backend speaks HTTPS with its CA and pin; the wrong-pin one fails its pin check.
            for expected in [
                "-> fetched: 3 operations, 3 errors", "-> throttled",
                ".pushOnly       -> firebase-cloud-messaging", ".accessibility  -> link",
                "redeemed it 1 time(s)", "-> released; tried again -> redeemed", "clockSkewTooBig",
                "The device clock is 7 min 1", "s behind", "networkError", "connection refused",
                "healthy        https://127.0.0.1:",
                "networkError (connectionRefused) from http://127.0.0.1:",
                "networkError (tlsPinMismatch) from https://127.0.0.1:",
                "matches none of the pinned keys",
            ] {
                #expect(result.out.contains(expected), "missing \"\(expected)\" in:\n\(result.out)")
            }
            // Its temporary stores, made in the sandbox's TMPDIR (see the next test), are gone.
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: sandbox.temporaryDirectory.path)
                .filter { $0.hasPrefix("fetchchannel-demo-") }
            #expect(leftovers.isEmpty, "temporary stores left behind: \(leftovers)")
        }

        /// The demo makes its temporary stores in TMPDIR: where TMPDIR names a file, it stops at
        /// once, naming that file. (Stores made elsewhere would leave the check above nothing to find.)
        @Test func demoMakesItsStoresInTMPDIR() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let notADirectory = try sandbox.write("tmp-file", "")
            let result = try await sandbox.run(["demo"], passphrase: nil, extra: ["TMPDIR": notADirectory.path])
            #expect(result.status == 1, "\(result.summary)")
            #expect(
                result.err.contains("cannot create a temporary directory under \(notADirectory.path): Not a directory"),
                "\(result.summary)")
        }

        /// `demo --json`: the same walkthrough as one JSON value, its steps in order with their lines.
        @Test func demoJSONHoldsTheSteps() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(["demo", "--json"], passphrase: nil)
            #expect(result.status == 0, "\(result.summary)")
            let object = try #require(try result.json() as? [String: Any], "\(result.summary)")
            #expect(object["completed"] as? Bool == true)
            let steps = try #require(object["steps"] as? [[String: Any]])
            #expect(Array(steps.compactMap { $0["number"] as? Int }.prefix(11)) == Array(0...10), "\(steps)")
            let lines = steps.flatMap { ($0["lines"] as? [String]) ?? [] }.joined(separator: "\n")
            #expect(lines.contains("networkError (tlsPinMismatch) from https://127.0.0.1:"), "\(lines)")
            #expect(result.lines.count == 1, "one JSON value, nothing else on standard output")
        }
    }
}

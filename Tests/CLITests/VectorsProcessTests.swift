import FetchChannelTestSupport
import FetchChannelVectors
import Foundation
import Testing

extension CLIOfflineProcessTests {
    /// `fetchchannel vectors verify` as a child process, on the real Vectors/ and on doctored copies.
    @Suite struct VectorsProcessTests {
        /// The vector files of the package (everything but the documentation).
        var vectorFiles: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: PackageLocations.vectors.path)) ?? [])
                .filter { !$0.hasPrefix(".") && !VectorSuite.documentationFiles.contains($0) }
        }

        func environment(_ sandbox: CLISandbox) -> [String: String] {
            var extra: [String: String] = [:]
            if let wycheproof = TestPaths.wycheproof { extra["WYCHEPROOF_DIR"] = wycheproof.path }
            return sandbox.environment(passphrase: nil, extra: extra)
        }

        /// A copy of Vectors/ that a test may change.
        func copyOfVectors(in sandbox: CLISandbox) throws -> URL {
            let copy = sandbox.file("Vectors")
            try FileManager.default.copyItem(at: PackageLocations.vectors, to: copy)
            return copy
        }

        @Test func everyFilePassesAndTheLastLineCountsThem() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await CLIProcess(
                ["vectors", "verify"], environment: environment(sandbox),
                currentDirectory: PackageLocations.root
            ).runToCompletion()
            #expect(result.status == 0, "\(result.summary)")
            let suites = TestPaths.wycheproof == nil ? 0 : WycheproofVectors.suites.count
            if TestPaths.wycheproof == nil && TestPaths.isCI {
                Issue.record("the Wycheproof suites are missing and CI=true")
            }
            let files = vectorFiles.count + suites
            #expect(result.lines.last == "\(files) passed, 0 failed", "\(result.summary)")
            #expect(result.lines.count == files + 1, "one line per file, then the summary")
            for name in vectorFiles {
                #expect(result.lines.contains { $0.hasPrefix("ok") && $0.contains(name) }, "\(name) not reported as ok")
            }
            if suites > 0 {
                #expect(
                    result.out.contains("wycheproof/ecdsa_secp256r1_sha256_test.json")
                        && result.out.contains("484 cases"))
                #expect(
                    result.out.contains("wycheproof/ecdsa_secp256r1_sha256_p1363_test.json")
                        && result.out.contains("262 cases"))
            }
        }

        @Test func jsonReport() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await CLIProcess(
                ["vectors", "verify", "--json", "--dir", PackageLocations.vectors.path],
                environment: environment(sandbox)
            )
            .runToCompletion()
            #expect(result.status == 0, "\(result.summary)")
            let object = try #require(try result.json() as? [String: Any])
            let files = try #require(object["files"] as? [[String: Any]])
            #expect(object["failed"] as? Int == 0 && object["passed"] as? Int == files.count)
            #expect(files.allSatisfy { $0["passed"] as? Bool == true && ($0["cases"] as? Int ?? 0) > 0 })
        }

        @Test func aFileWithoutAChecker() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let copy = try copyOfVectors(in: sandbox)
            try Data("{}".utf8).write(to: copy.appendingPathComponent("unchecked.json"))
            let result = try await CLIProcess(
                ["vectors", "verify", "--dir", copy.path, "--wycheproof", sandbox.file("none").path],
                environment: environment(sandbox)
            ).runToCompletion()
            #expect(result.status == 1, "\(result.summary)")
            #expect(
                result.lines.contains {
                    $0.hasPrefix("FAILED") && $0.contains("unchecked.json") && $0.contains("no checker")
                }, "\(result.summary)")
            // The given Wycheproof directory is missing, so both suites fail too.
            #expect(result.lines.last == "\(vectorFiles.count) passed, 3 failed", "\(result.summary)")
            #expect(
                result.err.hasSuffix("Error: 3 of \(vectorFiles.count + 3) vector files failed\n"), "\(result.summary)")
        }

        /// A file name is the directory's to choose: an escape sequence or a line feed in it is
        /// shown as `?`, on the file's one line, and cannot retitle the terminal or fake a row.
        @Test func aFileNameWithControlCharactersStaysOnItsLine() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let copy = try copyOfVectors(in: sandbox)
            try Data("{}".utf8).write(to: copy.appendingPathComponent("evil\u{1B}]0;PWNED\u{07}\nok      fake.json"))
            let result = try await CLIProcess(
                ["vectors", "verify", "--dir", copy.path], environment: sandbox.environment(passphrase: nil)
            ).runToCompletion()
            #expect(result.status == 1, "\(result.summary)")
            #expect(!result.out.contains("\u{1B}") && !result.err.contains("\u{1B}"), "\(result.summary)")
            #expect(
                result.lines.contains { $0.hasPrefix("FAILED  evil?]0;PWNED??ok      fake.json") }, "\(result.summary)")
            #expect(!result.lines.contains { $0.hasPrefix("ok      fake.json") }, "no forged row: \(result.summary)")
        }

        @Test func aChangedExpectationFailsAndNamesTheCase() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let copy = try copyOfVectors(in: sandbox)
            let file = copy.appendingPathComponent("jws-es256.json")
            var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
            var invalid = try #require(object["invalid"] as? [[String: Any]])
            let name = try #require(invalid[0]["name"] as? String)
            invalid[0]["expectedError"] = "invalidSignatureOnPurpose"
            object["invalid"] = invalid
            try JSONSerialization.data(withJSONObject: object).write(to: file)

            let result = try await CLIProcess(
                ["vectors", "verify", "--dir", copy.path], environment: sandbox.environment(passphrase: nil)
            )
            .runToCompletion()
            #expect(result.status == 1, "\(result.summary)")
            #expect(
                result.lines.contains {
                    $0.hasPrefix("FAILED") && $0.contains("jws-es256.json") && $0.contains("1 failed check")
                }, "\(result.summary)")
            #expect(result.err.contains("jws-es256.json: vector") && result.err.contains(name), "\(result.summary)")
            #expect(result.lines.last == "\(vectorFiles.count - 1) passed, 1 failed")
        }

        @Test func missingDirectoryIsARuntimeError() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(
                ["vectors", "verify", "--dir", sandbox.file("nowhere").path], passphrase: nil)
            #expect(
                result.status == 1 && result.out.isEmpty
                    && result.err.hasPrefix("Error: cannot list the vector directory"), "\(result.summary)")
            #expect(result.err.contains("nowhere: it does not exist;"), "\(result.summary)")
        }

        /// A path that is not a directory (a device, a regular file) is said to be one in plain
        /// words, not with Foundation's "NSCocoaErrorDomain error 256".
        @Test(arguments: ["/dev/zero", "file"])
        func aPathThatIsNotADirectoryIsSaidToBeNone(path: String) async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let directory = path == "file" ? try sandbox.write("vectors.json", "{}").path : path
            let result = try await sandbox.run(["vectors", "verify", "--dir", directory], passphrase: nil)
            #expect(result.status == 1 && result.out.isEmpty, "\(result.summary)")
            #expect(
                result.err == "Error: cannot list the vector directory \(directory): it is not a readable directory; "
                    + "run from the package root or give --dir DIR\n", "\(result.summary)")
        }

        /// A path that cannot be reached (under a file, here; under a directory that cannot be
        /// searched, likewise) is not said not to exist: FileManager's "no" meant either.
        @Test func aPathUnderAFileIsNotSaidToBeMissing() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let directory = try sandbox.write("vectors.json", "{}").path + "/vectors"
            let result = try await sandbox.run(["vectors", "verify", "--dir", directory], passphrase: nil)
            #expect(result.status == 1, "\(result.summary)")
            #expect(result.err.contains("it is not a readable directory (Not a directory)"), "\(result.summary)")
        }
    }
}

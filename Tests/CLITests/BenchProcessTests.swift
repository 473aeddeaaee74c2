import FetchChannelBenchmarks
import Foundation
import Testing

extension CLISubprocessTests {
    /// `fetchchannel bench --json`: rows with exactly the documented keys. A short debug run of the
    /// light rows only (the emulator and fetch rows load both cores for seconds and would disturb the
    /// timing tests running beside this one; .ci/run's bench smoke, after the tests, runs every
    /// row through the same BenchmarkSuite, which checks the names against `rowNames`).
    @Suite struct BenchProcessTests {
        static let lightRows = ["sign", "verify", "device-signature", "keystore-load", "sign-resident-growth"]

        @Test func jsonRowsHaveTheContractShape() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(
                [
                    "bench", "--json", "--seconds", "0.05", "--signatures", "1000",
                    "--rows", Self.lightRows.joined(separator: ","),
                ], passphrase: nil)
            #expect(result.status == 0, "\(result.summary)")
            let rows = try #require(try result.json() as? [[String: Any]], "\(result.summary)")
            #expect(
                rows.compactMap { $0["name"] as? String } == BenchmarkSuite.rowNames.filter(Self.lightRows.contains))
            for row in rows {
                #expect(Set(row.keys) == ["name", "value", "unit", "baseline", "ratio", "target", "met"], "\(row)")
                #expect(row["value"] is NSNumber && row["met"] is Bool && row["target"] is String)
                #expect(row["baseline"] is NSNumber || row["baseline"] is NSNull)
            }
            #expect(
                rows.contains { $0["baseline"] is NSNull && $0["ratio"] is NSNull },
                "absent values are null, not missing")
            #expect(result.err.contains("Measuring"), "progress goes to stderr")
            #expect(result.err.contains("signatures for the memory row"), "it is measured here: \(result.err)")
        }

        static let newRows = ["jwe-decrypt", "emulator-tls-handshakes", "fetch-client-cpu-tls", "fetch-client-cpu-jwe"]

        /// The HTTPS and JWE rows, in a short run: each prints in the table and in
        /// `--json` with its name, a target and the contract's keys (their values are not judged here).
        @Test func httpsAndJWERowsArePrinted() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let rows = Self.newRows.joined(separator: ",")
            // The fetch rows start a dozen backends and fetch hundreds of times: seconds in a debug
            // build, a minute under AddressSanitizer on a slow machine.
            let json = try await sandbox.run(
                ["bench", "--json", "--seconds", "0.05", "--rows", rows], passphrase: nil, timeout: 300)
            #expect(json.status == 0, "\(json.summary)")
            let printed = try #require(try json.json() as? [[String: Any]], "\(json.summary)")
            let names = printed.compactMap { $0["name"] as? String }
            #expect(names == BenchmarkSuite.rowNames.filter(Self.newRows.contains))
            for row in printed {
                #expect(Set(row.keys) == ["name", "value", "unit", "baseline", "ratio", "target", "met"], "\(row)")
                #expect(row["value"] is NSNumber && row["baseline"] is NSNumber && row["met"] is Bool, "\(row)")
                #expect((row["target"] as? String)?.isEmpty == false, "\(row)")
            }
            let ratios = printed.filter { $0["ratio"] is NSNumber }.compactMap { $0["name"] as? String }
            #expect(
                Set(ratios) == [
                    "jwe-decrypt", "emulator-tls-handshakes", "fetch-client-cpu-tls", "fetch-client-cpu-jwe",
                ],
                "judged by their ratio, or (the client CPU rows) showing it against the libcurl baseline")
            let jwe = try #require(printed.first { $0["name"] as? String == "fetch-client-cpu-jwe" })
            let split = jwe["unit"] as? String ?? ""
            #expect(["signing", "transport", "decryption", "libcurl"].allSatisfy(split.contains), "\(split)")
            #expect(jwe["target"] as? String == "<= 200 µs", "judged in µs, as the issue sets it")
            // The baseline is a real measurement of the C client, not a placeholder.
            #expect((jwe["baseline"] as? NSNumber)?.doubleValue ?? 0 > 0, "\(jwe)")

            let table = try await sandbox.run(["bench", "--seconds", "0.05", "--rows", "jwe-decrypt"], passphrase: nil)
            #expect(
                table.status == 0 && table.out.contains("jwe-decrypt") && table.out.contains(">= 0.85"),
                "\(table.summary)")
            #expect(!table.err.contains("for the memory row"), "not measured here, so not named: \(table.err)")
        }

        /// With SSLKEYLOGFILE set, the package's transport refuses to start libcurl, and so does the
        /// client CPU rows' C baseline client (libcurl would create the file and write the TLS
        /// secrets there): the run fails saying why, with the first fetch error's message, and no
        /// file appears.
        @Test func theLibcurlBaselineRefusesAKeyLogFile() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let keyLog = sandbox.root.appendingPathComponent("tls-keys.log")
            let result = try await sandbox.run(
                ["bench", "--seconds", "0.05", "--rows", "fetch-client-cpu-tls"], passphrase: nil,
                extra: ["SSLKEYLOGFILE": keyLog.path], timeout: 300)
            #expect(result.status == 1, "\(result.summary)")
            #expect(result.err.contains("SSLKEYLOGFILE"), "\(result.summary)")
            #expect(!FileManager.default.fileExists(atPath: keyLog.path), "libcurl opened the key log")
        }

        @Test func unknownRowIsAUsageError() async throws {
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let result = try await sandbox.run(["bench", "--rows", "sign,teleport"], passphrase: nil)
            #expect(result.status == 64 && result.err.contains("unknown row 'teleport'"), "\(result.summary)")
        }

        /// `fetchchannel-bench` takes the same settings within the same bounds as `fetchchannel
        /// bench`: both refuse these with a usage error (64) before any row runs. (Each names one
        /// light row, so that a setting wrongly taken runs briefly and fails on its exit status.)
        @Test(arguments: [
            ["--rows", ",sign", "--seconds", "0.01"],
            ["--rows", "keystore-load,,sign", "--seconds", "0.01"],
            ["--seconds", "0x1p-3", "--rows", "keystore-load"],
            ["--seconds", "0", "--rows", "keystore-load"],
            ["--seconds", "inf", "--rows", "keystore-load"],
            ["--signatures", "0", "--rows", "keystore-load"],
            ["--emulator-requests", "999", "--rows", "keystore-load"],
            ["--seconds", "0.01", "--seconds", "0.02", "--rows", "keystore-load"],
            ["--seconds=0x1p-3", "--rows", "keystore-load"],
            ["--json=yes", "--rows", "keystore-load"],
        ])
        func benchExecutableRefusesWhatTheCLIRefuses(_ arguments: [String]) async throws {
            let bench = CLIProcess.sibling("fetchchannel-bench")
            try #require(FileManager.default.isExecutableFile(atPath: bench.path), "built beside the tests")
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let cli = try await sandbox.run(["bench"] + arguments, passphrase: nil)
            #expect(cli.status == 64, "\(cli.summary)")
            let executable = try await sandbox.run(arguments, passphrase: nil, executable: bench)
            #expect(executable.status == 64, "\(executable.summary)")
            #expect(executable.out.isEmpty, "no row ran: \(executable.summary)")
        }

        /// Spaces around a row name, and `--name=value`, are the CLI's and the executable's alike:
        /// both take them.
        @Test func benchExecutableTakesRowNamesAsTheCLIDoes() async throws {
            let bench = CLIProcess.sibling("fetchchannel-bench")
            try #require(FileManager.default.isExecutableFile(atPath: bench.path), "built beside the tests")
            let sandbox = try CLISandbox()
            defer { sandbox.remove() }
            let arguments = ["--json", "--rows=keystore-load, sign-resident-growth", "--signatures", "1000"]
            for result in [
                try await sandbox.run(["bench"] + arguments, passphrase: nil),
                try await sandbox.run(arguments, passphrase: nil, executable: bench),
            ] {
                #expect(result.status == 0, "\(result.summary)")
                let rows = try #require(try result.json() as? [[String: Any]], "\(result.summary)")
                #expect(rows.compactMap { $0["name"] as? String } == ["keystore-load", "sign-resident-growth"])
            }
        }

        @Test func everyRowNameIsDocumented() {
            #expect(BenchmarkSuite.rowNames.count == Set(BenchmarkSuite.rowNames).count)
            let stable = [
                "sign", "verify", "device-signature", "fetch-8-backends", "emulator-fetches", "fetch-client-cpu",
            ]
            for name in stable + Self.newRows {
                #expect(BenchmarkSuite.rowNames.contains(name), "the issue's stable name \(name)")
            }
        }
    }
}

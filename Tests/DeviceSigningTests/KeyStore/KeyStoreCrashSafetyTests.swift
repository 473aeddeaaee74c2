import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

/// A child process saves, rotates and deletes keys in a loop; the test kills it with SIGKILL at
/// random points, 200 times (seeded; `rounds`), and checks after every kill that nothing was lost.
@Suite(.dedicatedThread) struct KeyStoreCrashSafetyTests {
    static let passphrase = "crash-safety passphrase"

    /// 200 kills; `CRASH_SAFETY_ROUNDS` sets fewer or more. The AddressSanitizer run of .ci/run
    /// sets 40: there each instrumented child takes seconds to start, and the plain run already
    /// makes all 200 kills.
    static var rounds: Int {
        let requested = Int(ProcessInfo.processInfo.environment["CRASH_SAFETY_ROUNDS"] ?? "") ?? 200
        return max(1, requested)
    }

    /// The child executable, built by SwiftPM next to the test bundle.
    static var childURL: URL {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // On Linux the bundle is a file in the build directory; on Darwin it is a directory tree.
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("keystore-crash-child")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return testBinary.deletingLastPathComponent().appendingPathComponent("keystore-crash-child")
    }

    /// Runs on a dedicated thread: the test blocks on pipes and processes for seconds, and must
    /// not hold one of the few cooperative-pool threads the other (async) tests need meanwhile.
    @Test func killedWritersNeverLoseOrCorruptAKey() async throws {
        let outcome: Result<[String], any Error> = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(returning: Result { try Self.killChildrenAndCheck() })
            }.start()
        }
        let failures = try outcome.get()
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    /// Returns the failed checks (expectations are evaluated by the test, on its own task).
    static func killChildrenAndCheck() throws -> [String] {
        var failures: [String] = []
        func check(_ condition: Bool, _ message: @autoclosure () -> String) {
            if !condition { failures.append(message()) }
        }
        let seed = UInt64(ProcessInfo.processInfo.environment["CRASH_SAFETY_SEED"] ?? "") ?? 0x5EED_2026
        var random = SplitMix64(seed: seed)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "crash-safety-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let child = Self.childURL
        guard FileManager.default.isExecutableFile(atPath: child.path) else {
            return ["child not built at \(child.path)"]
        }
        let passphrase = SecureBytes(Array(Self.passphrase.utf8))

        var mustExist = Set<String>()
        for round in 1...Self.rounds {
            let process = Process()
            process.executableURL = child
            process.arguments = [directory.path]
            process.environment = ["FETCHCHANNEL_PASSPHRASE": Self.passphrase]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()

            // Kill after a random number of completed steps: the child is then somewhere inside
            // its next save, rename, fsync or delete.
            let stepsBeforeKill = Int.random(in: 1...6, using: &random)
            var lines: [String] = []
            var pending = Data()
            let reader = output.fileHandleForReading
            while lines.count < stepsBeforeKill {
                let chunk = reader.availableData
                if chunk.isEmpty { break }  // the child exited (it must not)
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            // Then a random 0–4 ms more, so the kill lands anywhere in the next step (key
            // generation, KDF, temp-file write, fsync, rename, delete): the randomness of the kill
            // point is what this test is about, not waiting for something to happen.
            let jitter = Duration.microseconds(Int64.random(in: 0...4_000, using: &random))
            let killAt = ContinuousClock.now + jitter
            while ContinuousClock.now < killAt {}
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            // Lines the child wrote before dying still count.
            pending.append(reader.readDataToEndOfFile())
            lines += String(decoding: pending, as: UTF8.self).split(separator: "\n").map(String.init)
            try? reader.close()
            check(
                process.terminationReason == .uncaughtSignal,
                "round \(round) (seed \(seed)): the child ended on its own")

            for line in lines {
                let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { continue }
                if parts[0] == "saved" { mustExist.insert(parts[1]) }
                if parts[0] == "deleting" { mustExist.remove(parts[1]) }
            }

            // Open (which removes stale temp files), then check every listed and every promised key.
            let store = try KeyStore(directory: directory)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            check(
                !names.contains { $0.hasPrefix(".fetchchannel-tmp-") },
                "round \(round) (seed \(seed)): a temp file survived the open: \(names)")
            let listed = Set(try store.list().map(\.keyId))
            check(
                mustExist.isSubset(of: listed),
                "round \(round) (seed \(seed)): missing \(mustExist.subtracting(listed))")
            for keyId in listed {
                let key = try store.load(keyId, passphrase: passphrase)
                check(
                    key.publicKey.jwkThumbprint == keyId, "round \(round) (seed \(seed)): \(keyId) loads as another key"
                )
            }
        }
        check(!mustExist.isEmpty, "the child never completed a save: the test exercised nothing")
        return failures
    }
}

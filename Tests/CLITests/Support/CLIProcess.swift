import DeviceSigning
import FetchChannelTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a finished `fetchchannel` run left behind.
struct CLIResult: Sendable {
    let status: Int32
    let standardOutput: Data
    let standardError: Data

    var out: String { String(decoding: standardOutput, as: UTF8.self) }
    var err: String { String(decoding: standardError, as: UTF8.self) }
    /// Standard output's lines, without the trailing empty one.
    var lines: [String] {
        out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
    }

    /// Standard output parsed as JSON; the error names the whole run when it is not JSON.
    func json() throws -> Any {
        do {
            return try JSONSerialization.jsonObject(with: standardOutput)
        } catch {
            throw NotJSON(description: "standard output is not JSON (\(error.localizedDescription)): \(summary)")
        }
    }

    struct NotJSON: Error, CustomStringConvertible {
        let description: String
    }

    var summary: String { "exit \(status)\n--- stdout:\n\(out)\n--- stderr:\n\(err)" }
}

/// Runs the built `fetchchannel` binary as a child process: arguments, an environment of its
/// own (never this process's, so no passphrase leaks in), standard input from /dev/null (not a
/// terminal) unless given, standard output and error captured in files (no pipe can fill up).
final class CLIProcess: @unchecked Sendable {
    // @unchecked: `process` is configured before run() and afterwards only read for its pid and
    // status, which Foundation synchronizes; the file URLs are immutable.

    /// The binary SwiftPM built next to the test bundle (CLITests depends on the executable
    /// target, so `swift test` builds it). `FETCHCHANNEL_BINARY` overrides.
    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["FETCHCHANNEL_BINARY"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        // On Linux the bundle is a file in the build directory; on Darwin a directory tree in it.
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("fetchchannel")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory),
                !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate.path)
            {
                return candidate
            }
            directory.deleteLastPathComponent()
        }
        return testBinary.deletingLastPathComponent().appendingPathComponent("fetchchannel")
    }()

    /// An executable SwiftPM built beside `fetchchannel` (`fetchchannel-bench`).
    static func sibling(_ name: String) -> URL {
        binary.deletingLastPathComponent().appendingPathComponent(name)
    }

    /// The environment every run starts from: PATH and a HOME of its own.
    static func baseEnvironment(home: URL) -> [String: String] {
        var environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": home.path,
            "LANG": "C.UTF-8",
        ]
        // Under a sanitizer run the child is instrumented too: it needs the same settings
        // (suppressions for the toolchain's own leaks). These carry no secrets.
        for name in ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"] {
            if let value = ProcessInfo.processInfo.environment[name] { environment[name] = value }
        }
        return environment
    }

    let process = Process()
    /// Signalled by the child's exit (its termination handler).
    private let exited = ExitSignal()
    let outputURL: URL
    let errorURL: URL
    private let scratch: URL

    /// `standardOutputPath` and `standardInputPath` name a file the child's stream opens instead
    /// (`/dev/full`, a directory): then its output is not captured, or `standardInput` not used.
    /// `executable` is another binary built beside `fetchchannel` (``sibling(_:)``).
    init(
        _ arguments: [String], environment: [String: String], standardInput: Data? = nil,
        currentDirectory: URL? = nil, standardOutputPath: String? = nil, standardInputPath: String? = nil,
        executable: URL = CLIProcess.binary
    ) throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("cli-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        outputURL = scratch.appendingPathComponent("stdout")
        errorURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        if let standardOutputPath {
            let descriptor = open(standardOutputPath, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
            process.standardOutput = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        }
        process.standardError = try FileHandle(forWritingTo: errorURL)
        if let standardInputPath {
            let descriptor = open(standardInputPath, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw CocoaError(.fileReadUnknown) }
            process.standardInput = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        } else if let standardInput {
            let inputURL = scratch.appendingPathComponent("stdin")
            _ = FileManager.default.createFile(atPath: inputURL.path, contents: standardInput)
            process.standardInput = try FileHandle(forReadingFrom: inputURL)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: scratch)
    }

    /// Starts the child and returns once it has exited (killed after `timeout` seconds).
    func runToCompletion(timeout: Double = 60) async throws -> CLIResult {
        try start()
        return await waitForExit(timeout: timeout)
    }

    /// Starts the child without waiting, then closes this process's copies of the child's
    /// standard streams (the child has its own): tests elsewhere in this process count descriptors.
    func start() throws {
        // Set before the start, so that an exit however early is seen.
        process.terminationHandler = { [exited] _ in exited.signal() }
        do {
            try process.run()
        } catch {
            process.terminationHandler = nil
            throw error
        }
        for handle in [process.standardInput, process.standardOutput, process.standardError] {
            if let handle = handle as? FileHandle, handle !== FileHandle.nullDevice { try? handle.close() }
        }
    }

    /// Waits for a child started with `start()`, woken by its exit; kills it after `timeout`
    /// seconds, stretched in the sanitizer runs (``LooseTimeBounds``), or at once when the waiting
    /// task is cancelled (a test that throws): the bound only keeps a hung child from lasting for
    /// ever.
    func waitForExit(timeout: Double = 30) async -> CLIResult {
        let bound = timeout * Double(LooseTimeBounds.scale)
        let (exited, process) = (exited, process)
        guard process.processIdentifier > 0 else {
            Issue.record("fetchchannel \(process.arguments ?? []) was never started")
            return result()
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await exited.wait() }
            group.addTask {
                let timedOut = (try? await Task.sleep(for: .seconds(bound))) != nil
                // Cancelled because it exited: nothing to do. Otherwise the bound passed, or the
                // waiting task was cancelled: the child goes.
                guard !exited.hasExited else { return }
                kill(process.processIdentifier, SIGKILL)
                if timedOut {
                    Issue.record("fetchchannel \(process.arguments ?? []) did not exit within \(bound) s; killed")
                }
            }
            await group.next()
            // The bound's task ends at once; after a kill, the wait ends with the exit it causes.
            group.cancelAll()
        }
        return result()
    }

    /// What the child wrote to standard output so far.
    var outputSoFar: String {
        (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
    }

    private func result() -> CLIResult {
        CLIResult(
            status: process.terminationStatus,
            standardOutput: (try? Data(contentsOf: outputURL)) ?? Data(),
            standardError: (try? Data(contentsOf: errorURL)) ?? Data())
    }
}

/// One child's exit, awaited without polling: signalled once by its termination handler.
final class ExitSignal: Sendable {
    private let state = Locked<(exited: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func signal() {
        let waiters = state.withLock { state in
            state.exited = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    var hasExited: Bool { state.withLock { $0.exited } }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let hasExited = state.withLock { state in
                if !state.exited { state.waiters.append(continuation) }
                return state.exited
            }
            if hasExited { continuation.resume() }
        }
    }
}

/// A temporary directory per test, with a key store path inside and an environment that
/// gives the passphrase (or not).
struct CLISandbox: Sendable {
    let root: URL
    static let passphrase = "correct horse battery staple"

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cli-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: temporaryDirectory, withIntermediateDirectories: true)
    }

    /// The children's TMPDIR: what a command puts in its temporary directory (the demo's stores,
    /// `serve --tls`'s CA file) stays in the sandbox and goes with it.
    var temporaryDirectory: URL { root.appendingPathComponent("tmp", isDirectory: true) }

    /// `--store` for this sandbox.
    var store: String { root.appendingPathComponent("keys").path }
    var storeArguments: [String] { ["--store", store] }

    /// HOME and TMPDIR inside the sandbox, and FETCHCHANNEL_PASSPHRASE when `passphrase` is given.
    func environment(passphrase: String? = CLISandbox.passphrase, extra: [String: String] = [:]) -> [String: String] {
        var environment = CLIProcess.baseEnvironment(home: root.appendingPathComponent("home"))
        environment["TMPDIR"] = temporaryDirectory.path
        if let passphrase { environment["FETCHCHANNEL_PASSPHRASE"] = passphrase }
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// Runs `fetchchannel arguments…` to completion; it is killed, and the test fails, after
    /// `timeout` seconds.
    func run(
        _ arguments: [String], passphrase: String? = CLISandbox.passphrase, extra: [String: String] = [:],
        standardInput: Data? = nil, currentDirectory: URL? = nil, timeout: Double = 60,
        standardOutputPath: String? = nil, standardInputPath: String? = nil, executable: URL = CLIProcess.binary
    ) async throws -> CLIResult {
        try await CLIProcess(
            arguments, environment: environment(passphrase: passphrase, extra: extra),
            standardInput: standardInput, currentDirectory: currentDirectory,
            standardOutputPath: standardOutputPath, standardInputPath: standardInputPath, executable: executable
        ).runToCompletion(timeout: timeout)
    }

    /// Generates a key in the sandbox store and returns its id.
    func generateKey(_ extraArguments: [String] = []) async throws -> String {
        let result = try await run(["key", "generate"] + storeArguments + extraArguments)
        try #require(result.status == 0, "\(result.summary)")
        return try #require(result.lines.first)
    }

    func file(_ name: String) -> URL { root.appendingPathComponent(name) }

    func write(_ name: String, _ text: String) throws -> URL {
        let url = file(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    /// Writes a file only its owner may read (0600), as a passphrase file must be.
    func writePrivate(_ name: String, _ text: String) throws -> URL {
        let url = try write(name, text)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        return url
    }

    func remove() {
        try? FileManager.default.removeItem(at: root)
    }
}

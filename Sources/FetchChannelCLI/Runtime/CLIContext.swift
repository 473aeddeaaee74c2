import DeviceSigning
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Everything a command may touch of its surroundings, so tests can run commands in-process:
/// the environment, the working directory, the output channels and standard input.
package struct CLIContext: Sendable {
    /// The environment, without `FETCHCHANNEL_PASSPHRASE` (``environmentPassphrase`` holds it).
    package var environment: [String: String]
    /// The bytes of `FETCHCHANNEL_PASSPHRASE`, nil when it is not set (``EnvironmentPassphrase``).
    package var environmentPassphrase: SecureBytes?
    /// The variables whose value is not UTF-8 text: ``environment`` holds them with U+FFFD for
    /// each invalid byte, so their value there is not the one that was set.
    package var variablesNotUTF8: Set<String> = []
    /// Relative paths in arguments are resolved against this directory; nil when the process has
    /// none it can use (it was removed: getcwd fails), and then a relative path is refused
    /// (``fileURL(_:isDirectory:)``) for the reason ``noCurrentDirectoryReason`` gives.
    package var currentDirectory: URL?
    /// Why there is no ``currentDirectory``, as a refusal says it.
    package var noCurrentDirectoryReason = "the working directory no longer exists"
    package var standardOutput: OutputChannel
    package var standardError: OutputChannel
    /// Whether standard input is a terminal (a passphrase may then be prompted for).
    package var standardInputIsTerminal: Bool
    /// Reads standard input to its end, but never more than `maximumBytes + 1` bytes (for
    /// arguments given as `-`; one byte over the bound tells the caller it was too large).
    package var readStandardInput: @Sendable (_ maximumBytes: Int) throws -> [UInt8]
    /// Asks for a passphrase without echo; nil when there is no terminal to ask on.
    package var passphrasePrompt: (@Sendable (_ prompt: String) throws -> [UInt8])?
    /// The device clock: the time a command stamps on what it makes (a Device-Signature's
    /// creation time) and the clock `skew` measures. An input, so that a test can move it while a
    /// command waits.
    package var wallClock: any WallClock = SystemWallClock()

    package init(
        environment: [String: String], currentDirectory: URL?, standardOutput: OutputChannel,
        standardError: OutputChannel, standardInputIsTerminal: Bool,
        readStandardInput: @escaping @Sendable (_ maximumBytes: Int) throws -> [UInt8],
        passphrasePrompt: (@Sendable (_ prompt: String) throws -> [UInt8])?
    ) {
        var environment = environment
        // A test's environment may name the passphrase: it is kept as the process's would be.
        if let passphrase = environment.removeValue(forKey: EnvironmentPassphrase.variable) {
            environmentPassphrase = SecureBytes(passphrase.utf8)
        }
        self.environment = environment
        self.currentDirectory = currentDirectory
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.standardInputIsTerminal = standardInputIsTerminal
        self.readStandardInput = readStandardInput
        self.passphrasePrompt = passphrasePrompt
    }

    /// The real process: its environment, working directory, standard streams and terminal.
    /// `closedStandardStreams`: the descriptors the process was started without
    /// (``StandardStreams/openNullOntoClosed()``), which stay closed to the command: reading a
    /// closed standard input, or writing to a closed standard output, is an error.
    package static func process(closedStandardStreams closed: Set<Int32> = []) -> CLIContext {
        let isTerminal = isatty(STDIN_FILENO) == 1
        let inputIsClosed = closed.contains(STDIN_FILENO)
        var prompt: (@Sendable (String) throws -> [UInt8])?
        if isTerminal {
            prompt = { text in try TerminalPrompt.readSecret(prompt: text) }
        }
        // Taken out first: reading `ProcessInfo`'s environment copies every value into strings.
        let passphrase = EnvironmentPassphrase.takeFromProcess()
        var context = CLIContext(
            environment: ProcessInfo.processInfo.environment,
            currentDirectory: nil,
            standardOutput: closed.contains(STDOUT_FILENO) ? .closed() : .standardOutput,
            standardError: closed.contains(STDERR_FILENO) ? .closed() : .standardError,
            standardInputIsTerminal: isTerminal,
            readStandardInput: { maximumBytes in
                // A closed or unreadable standard input (`<&-`, a directory) is an error, not empty input.
                guard !inputIsClosed else {
                    throw CLIFailure(.unreadableInput, "cannot read standard input: it is closed")
                }
                guard var data = BoundedRead.read(STDIN_FILENO, maximumBytes: maximumBytes) else {
                    throw CLIFailure(
                        .unreadableInput, "cannot read standard input: \(String(cString: strerror(errno)))")
                }
                // The copy is the caller's; this buffer (a plaintext to encrypt, say) goes now.
                defer { data.withUnsafeMutableBytes { secureZero($0) } }
                return Array(data)
            },
            passphrasePrompt: prompt)
        context.environmentPassphrase = passphrase
        context.variablesNotUTF8 = variablesNotUTF8()
        switch workingDirectory() {
        case .success(let directory): context.currentDirectory = directory
        case .failure(let reason): context.noCurrentDirectoryReason = reason.text
        }
        return context
    }

    /// Why the process has no working directory that relative paths can be resolved against.
    private struct NoWorkingDirectory: Error {
        let text: String
    }

    /// The process's working directory, or why there is none to use. Removed, getcwd fails, and
    /// Foundation's `currentDirectoryPath` is then empty, which made `x.pem` the file `/x.pem`.
    private static func workingDirectory() -> Result<URL, NoWorkingDirectory> {
        guard let pointer = getcwd(nil, 0) else {
            let reason = errno == ENOENT ? nil : String(cString: strerror(errno))
            return .failure(
                NoWorkingDirectory(
                    text: reason.map { "the working directory cannot be found (\($0))" }
                        ?? "the working directory no longer exists"))
        }
        defer { free(pointer) }
        // Linux has answered "(unreachable)/…" for a directory outside the process's root.
        guard pointer.pointee == CChar(UInt8(ascii: "/")) else {
            return .failure(NoWorkingDirectory(text: "the working directory is outside this process's root"))
        }
        // Read as text, each invalid byte would become U+FFFD: a path into another directory.
        guard let path = String(validatingCString: pointer) else {
            return .failure(NoWorkingDirectory(text: "the working directory's path is not UTF-8 text"))
        }
        return .success(URL(fileURLWithPath: path, isDirectory: true))
    }

    /// The names of the process's environment variables whose value is not UTF-8.
    private static func variablesNotUTF8() -> Set<String> {
        var names: Set<String> = []
        let table: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        guard var entry = table else { return names }  // NULL after clearenv()
        while let pointer = entry.pointee {
            let bytes = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))
            if let equals = bytes.firstIndex(of: UInt8(ascii: "=")),
                String(validating: bytes[(equals + 1)...], as: UTF8.self) == nil
            {
                names.insert(String(decoding: bytes[..<equals], as: UTF8.self))
            }
            entry += 1
        }
        return names
    }

    /// An in-memory context for tests: no terminal, empty standard input unless given.
    package static func inMemory(
        environment: [String: String] = [:], currentDirectory: URL? = URL(fileURLWithPath: "/"),
        standardInput: [UInt8] = []
    ) -> CLIContext {
        CLIContext(
            environment: environment, currentDirectory: currentDirectory,
            standardOutput: .inMemory(), standardError: .inMemory(), standardInputIsTerminal: false,
            readStandardInput: { maximumBytes in Array(standardInput.prefix(maximumBytes + 1)) }, passphrasePrompt: nil)
    }

    /// `path` as a file URL, relative paths against `currentDirectory` and `~/` against HOME (when
    /// HOME is an absolute path in UTF-8; otherwise `~` is a name like any other, as without HOME).
    ///
    /// Only `.` segments and repeated slashes are taken out (``FilePathText``). A `..` is left for
    /// the file system to resolve, as every other tool does: resolving it in the text (as URL
    /// standardization does) named another file than `cat` would open (another passphrase file,
    /// another output directory).
    ///
    /// Without a working directory, a relative path is a usage error: the command runs as typed
    /// once the path is absolute.
    package func fileURL(_ path: String, isDirectory: Bool = false) throws(UsageError) -> URL {
        let absolute: String
        if path.hasPrefix("/") {
            absolute = path
        } else if path == "~" || path.hasPrefix("~/"), let home = environment["HOME"], home.hasPrefix("/"),
            !variablesNotUTF8.contains("HOME")
        {
            absolute = home + "/" + path.dropFirst()
        } else if let currentDirectory {
            absolute = currentDirectory.path + "/" + path
        } else {
            throw UsageError(
                .invalidValue,
                "cannot use the relative path '\(ArgumentParser.shown(path))': \(noCurrentDirectoryReason); "
                    + "give an absolute path")
        }
        return URL(fileURLWithPath: FilePathText.withoutDotSegments(absolute), isDirectory: isDirectory)
    }
}

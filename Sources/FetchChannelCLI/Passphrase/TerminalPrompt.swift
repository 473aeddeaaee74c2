import DeviceSigning

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Terminal settings saved while echo is off, for the SIGINT handler to put back. Only touched
/// by the one thread that prompts and by the handler it installs (tcsetattr is async-signal-safe).
nonisolated(unsafe) private var savedTerminalSettings = termios()

/// Reads a line from the terminal on standard input without echo (termios), as `ssh-keygen`
/// and `openssl` do. The prompt goes to standard error, so standard output stays data.
enum TerminalPrompt {
    static let maximumLength = 1024

    static func readSecret(prompt: String) throws -> [UInt8] {
        guard isatty(STDIN_FILENO) == 1 else {
            throw CLIFailure(.passphrase, "standard input is not a terminal; no passphrase can be prompted for")
        }
        OutputChannel.standardError.write(prompt)
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else {
            throw CLIFailure(.passphrase, "cannot read the terminal settings: \(String(cString: strerror(errno)))")
        }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        savedTerminalSettings = original
        // Ctrl-C while echo is off must not leave the terminal silent.
        let previousHandler = signal(SIGINT) { _ in
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &savedTerminalSettings)
            _exit(130)
        }
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent) == 0 else {
            signal(SIGINT, previousHandler)
            throw CLIFailure(.passphrase, "cannot switch off terminal echo: \(String(cString: strerror(errno)))")
        }
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
            signal(SIGINT, previousHandler)
            OutputChannel.standardError.write("\n")
        }
        var line: [UInt8] = []
        line.reserveCapacity(maximumLength)
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 || byte == UInt8(ascii: "\n") { break }
            guard line.count < maximumLength else {
                secureZero(&line)  // OPENSSL_cleanse: a plain loop may be optimised away
                throw CLIFailure(.passphrase, "the passphrase is longer than \(maximumLength) bytes")
            }
            line.append(byte)
        }
        byte = 0
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return line
    }
}

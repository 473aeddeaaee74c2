import DeviceSigning
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a line from the terminal on standard input without echo (termios), as `ssh-keygen`
/// and `openssl` do. The prompt goes to standard error, so standard output stays data.
///
/// A signal never leaves the terminal silent. As readpassphrase(3) does, the prompt catches the
/// signals that end or stop a process while echo is off; one that arrives ends the prompt, puts
/// the terminal and the signal's previous disposition back, and then sends the signal again. A
/// process so ended dies of its signal, with echo on. A process so stopped (Ctrl-Z, or a
/// background job touching the terminal) asks again from the start when it is continued. A
/// signal the process ignores ends the prompt with an error.
///
/// The handler only writes to a pipe that the prompt polls beside the terminal: whichever of the
/// process's threads the kernel runs it on, the prompting thread wakes.
enum TerminalPrompt {
    static let maximumLength = 1024

    /// The signals readpassphrase(3) catches.
    static let interruptingSignals: [Int32] = [
        SIGALRM, SIGHUP, SIGINT, SIGPIPE, SIGQUIT, SIGTERM, SIGTSTP, SIGTTIN, SIGTTOU,
    ]
    /// Those whose default action stops the process; after them the prompt starts again.
    static let stoppingSignals: Set<Int32> = [SIGTSTP, SIGTTIN, SIGTTOU]

    static func readSecret(prompt: String) throws -> [UInt8] {
        guard isatty(STDIN_FILENO) == 1 else {
            throw CLIFailure(.passphrase, "standard input is not a terminal; no passphrase can be prompted for")
        }
        while true {
            let wake = try SignalWakePipe()
            // First the handlers, then echo off (in readLine): no moment with echo off and a
            // signal uncaught.
            let previous = installHandlers()
            // Unblocked on this thread too (Dispatch's threads block them): a background
            // process's tcsetattr(3) or read(2) must raise SIGTTOU or SIGTTIN, not go ahead or
            // fail with EIO as a blocked signal makes them.
            var previousMask = sigset_t()
            var interrupting = signalSet(interruptingSignals)
            pthread_sigmask(SIG_UNBLOCK, &interrupting, &previousMask)
            let outcome = Result { try readLine(prompt: prompt, wake: wake) }
            pthread_sigmask(SIG_SETMASK, &previousMask, nil)
            restoreHandlers(previous)
            // Also a signal that came after the line was read but before the handlers went.
            let caught = wake.caughtSignal
            wake.release()
            guard let caught else {
                guard let line = try outcome.get() else { continue }  // cannot happen: nil means caught
                return line
            }
            if case .success(var line?) = outcome { secureZero(&line) }
            // The terminal and the previous disposition are back: the signal now does what it
            // would have done without the prompt.
            resend(caught)
            guard stoppingSignals.contains(caught) else {
                throw CLIFailure(.passphrase, "the passphrase prompt was interrupted by signal \(caught)")
            }
        }
    }

    /// One prompt with echo off, the terminal put back on return; nil when a signal came first.
    private static func readLine(prompt: String, wake: SignalWakePipe) throws -> [UInt8]? {
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else {
            throw CLIFailure(.passphrase, "cannot read the terminal settings: \(String(cString: strerror(errno)))")
        }
        OutputChannel.standardError.write(prompt)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO | ECHONL)
        while tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent) != 0 {
            // A background process is sent SIGTTOU here; with echo still on, nothing to put back.
            guard errno == EINTR else {
                throw CLIFailure(.passphrase, "cannot switch off terminal echo: \(String(cString: strerror(errno)))")
            }
            if wake.caughtSignal != nil { return nil }
        }
        defer {
            while tcsetattr(STDIN_FILENO, TCSAFLUSH, &original) != 0, errno == EINTR {}
            OutputChannel.standardError.write("\n")
        }
        var line: [UInt8] = []
        line.reserveCapacity(maximumLength)
        var byte: UInt8 = 0
        defer { byte = 0 }
        while true {
            switch wake.waitForInput(on: STDIN_FILENO) {
            case .signal:
                secureZero(&line)  // OPENSSL_cleanse: a plain loop may be optimised away
                return nil
            case .failed(let code):
                secureZero(&line)
                throw CLIFailure(.passphrase, "cannot wait for the terminal: \(String(cString: strerror(code)))")
            case .readable:
                break
            }
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                let code = errno
                secureZero(&line)
                throw CLIFailure(.passphrase, "cannot read from the terminal: \(String(cString: strerror(code)))")
            }
            if count == 0 || byte == UInt8(ascii: "\n") { break }
            guard line.count < maximumLength else {
                secureZero(&line)
                throw CLIFailure(.passphrase, "the passphrase is longer than \(maximumLength) bytes")
            }
            line.append(byte)
        }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return line
    }

    /// Raises `signal` on this thread with it unblocked here: the prompt may run on a Dispatch
    /// thread, which blocks such signals, and an unblocked signal is delivered before raise(3)
    /// returns (a stop, until the process is continued).
    private static func resend(_ signal: Int32) {
        var only = signalSet([signal])
        var previousMask = sigset_t()
        pthread_sigmask(SIG_UNBLOCK, &only, &previousMask)
        raise(signal)
        pthread_sigmask(SIG_SETMASK, &previousMask, nil)
    }

    private static func signalSet(_ signals: [Int32]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        return set
    }

    private static func installHandlers() -> [(Int32, sigaction)] {
        interruptingSignals.compactMap { number in
            var action = sigaction()
            #if canImport(Glibc)
                action.__sigaction_handler.sa_handler = promptSignalHandler
            #else
                action.__sigaction_u.__sa_handler = promptSignalHandler
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            var previous = sigaction()
            guard sigaction(number, &action, &previous) == 0 else { return nil }
            return (number, previous)
        }
    }

    private static func restoreHandlers(_ previous: [(Int32, sigaction)]) {
        for (number, action) in previous {
            var action = action
            sigaction(number, &action, nil)
        }
    }
}

/// The pipe a caught signal writes to, and the first signal caught, for the one prompt at a time
/// (the CLI prompts from one thread). Both are set up before any handler is installed, so the
/// handler only loads and stores atomics and calls write(2), which are async-signal-safe.
private let promptWakeDescriptor = Atomic<Int32>(-1)
private let promptCaughtSignal = Atomic<Int32>(0)

private func promptSignalHandler(_ number: Int32) {
    let savedErrno = errno
    _ = promptCaughtSignal.compareExchange(expected: 0, desired: number, ordering: .sequentiallyConsistent)
    var byte: UInt8 = 1
    _ = write(promptWakeDescriptor.load(ordering: .sequentiallyConsistent), &byte, 1)
    errno = savedErrno
}

/// The self-pipe of one prompt (non-blocking, close-on-exec), published to the handler.
private struct SignalWakePipe {
    private let readEnd: Int32
    private let writeEnd: Int32

    enum Wait {
        case readable
        case signal(Int32)
        case failed(Int32)
    }

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw CLIFailure(.passphrase, "cannot prepare the prompt: \(String(cString: strerror(errno)))")
        }
        readEnd = ends[0]
        writeEnd = ends[1]
        for end in ends {
            // A full pipe must not block the handler; a child the CLI starts must not inherit it.
            guard fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) == 0, fcntl(end, F_SETFD, FD_CLOEXEC) == 0
            else {
                let code = errno
                for end in ends { closeDescriptor(end) }
                throw CLIFailure(.passphrase, "cannot prepare the prompt: \(String(cString: strerror(code)))")
            }
        }
        promptCaughtSignal.store(0, ordering: .sequentiallyConsistent)
        promptWakeDescriptor.store(writeEnd, ordering: .sequentiallyConsistent)
    }

    /// Called after the handlers are restored: no handler writes to the pipe any more.
    func release() {
        promptWakeDescriptor.store(-1, ordering: .sequentiallyConsistent)
        closeDescriptor(readEnd)
        closeDescriptor(writeEnd)
    }

    var caughtSignal: Int32? {
        let number = promptCaughtSignal.load(ordering: .sequentiallyConsistent)
        return number == 0 ? nil : number
    }

    /// Until `descriptor` has input (or hung up) or a signal was caught.
    func waitForInput(on descriptor: Int32) -> Wait {
        while true {
            if let signal = caughtSignal { return .signal(signal) }
            var polled = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&polled, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failed(errno)
            }
            if let signal = caughtSignal { return .signal(signal) }
            if polled[0].revents != 0 { return .readable }
        }
    }
}

private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}

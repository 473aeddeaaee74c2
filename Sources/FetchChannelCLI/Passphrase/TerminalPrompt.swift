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
/// signals that end or stop a process (those the process does not ignore) while echo is off;
/// one that arrives ends the prompt, puts the terminal and the signals' previous dispositions
/// back, and then sends the signal again. A process so ended dies of its signal, with echo on. A
/// process so stopped (Ctrl-Z, or a background job reaching for the terminal) asks again from the
/// start when it is continued. So does one stopped by SIGSTOP, which no process can catch: the
/// prompt catches SIGCONT too, since the shell put its own settings (echo on) back meanwhile.
///
/// The handler only records the signal and writes to a pipe that the prompt polls beside the
/// terminal: whichever of the process's threads the kernel runs it on, the prompting thread
/// wakes. The signals are unblocked on the prompting thread (Dispatch's threads block them), so
/// that a background process is stopped by SIGTTOU or SIGTTIN at the terminal, as ssh is,
/// instead of switching echo off behind the foreground job's back.
enum TerminalPrompt {
    static let maximumLength = 1024

    /// The signals readpassphrase(3) catches, and SIGCONT.
    static let interruptingSignals: [Int32] = [
        SIGALRM, SIGHUP, SIGINT, SIGPIPE, SIGQUIT, SIGTERM, SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT,
    ]
    /// Those after which the prompt starts again: the signals whose default action stops the
    /// process, and SIGCONT, which continues one stopped by the uncatchable SIGSTOP (a debugger,
    /// `kill -STOP`) to find the terminal as the shell left it, echoing.
    static let stoppingSignals: Set<Int32> = [SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT]

    static func readSecret(prompt: String) throws -> [UInt8] {
        guard isatty(STDIN_FILENO) == 1 else {
            throw CLIFailure(.passphrase, "standard input is not a terminal; no passphrase can be prompted for")
        }
        guard let wake = PromptWakePipe.readEnd else {
            throw CLIFailure(.passphrase, "cannot prepare the prompt: no pipe for its signal handler")
        }
        while true {
            PromptWakePipe.drain(wake)
            promptCaughtSignals.store(0, ordering: .sequentiallyConsistent)
            // First the handlers, then echo off (in readLine): no moment with echo off and a
            // signal uncaught.
            let previous = installHandlers()
            var caughtSet = signalSet(previous.map(\.number))
            var previousMask = sigset_t()
            var line: [UInt8]?
            var failure: (any Error)?
            if pthread_sigmask(SIG_UNBLOCK, &caughtSet, &previousMask) == 0 {
                do {
                    line = try readLine(
                        prompt: prompt, wake: wake, stopsInBackground: previous.contains { $0.number == SIGTTOU })
                } catch {
                    failure = error
                }
                pthread_sigmask(SIG_SETMASK, &previousMask, nil)
            } else {
                failure = CLIFailure(.passphrase, "cannot unblock the signals the prompt must catch")
            }
            restoreHandlers(previous)
            // Also the signals that came after the line was read but before the handlers went.
            let caught = caughtSignals()
            if caught.isEmpty {
                if let failure { throw failure }
                if let line { return line }
                continue  // not reached: readLine gives up its line only for a caught signal
            }
            line?.withUnsafeMutableBytes { secureZero($0) }  // in place: OPENSSL_cleanse
            // The terminal and the previous dispositions are back: each signal now does what it
            // would have done without the prompt (in signal order: the terminating ones first).
            for signal in caught { resend(signal) }
            guard caught.allSatisfy(stoppingSignals.contains) else {
                throw CLIFailure(.passphrase, "the passphrase prompt was interrupted by signal \(caught[0])")
            }
        }
    }

    /// One prompt with echo off, the terminal put back on return; nil when a signal came first.
    /// `stopsInBackground`: SIGTTOU is caught (not ignored), so a background job that touches the
    /// terminal is stopped there rather than let through.
    private static func readLine(prompt: String, wake: Int32, stopsInBackground: Bool) throws -> [UInt8]? {
        // With SIGTTOU ignored the kernel would let a background job switch echo off under the
        // foreground job, and then fail its read: such a job is refused first.
        guard stopsInBackground || tcgetpgrp(STDIN_FILENO) == getpgrp() else {
            throw CLIFailure(
                .passphrase, "the passphrase prompt needs the terminal: run the command in the foreground")
        }
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else {
            throw CLIFailure(.passphrase, "cannot read the terminal settings: \(String(cString: strerror(errno)))")
        }
        // With `stty tostop`, a background process's write is sent SIGTTOU.
        guard writeToTerminal(prompt) else { return nil }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO | ECHONL)
        while tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent) != 0 {
            // A background process is sent SIGTTOU here; with echo still on, nothing to put back.
            guard errno == EINTR else {
                throw CLIFailure(.passphrase, "cannot switch off terminal echo: \(String(cString: strerror(errno)))")
            }
            if promptCaughtSignals.load(ordering: .sequentiallyConsistent) != 0 { return nil }
        }
        defer { restoreTerminal(&original) }
        var line: [UInt8] = []
        line.reserveCapacity(maximumLength)  // never reallocated: at most maximumLength bytes
        var byte: UInt8 = 0
        defer { byte = 0 }
        while true {
            switch waitForInput(wake: wake) {
            case .signal:
                secureZero(&line)
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

    /// Writes the prompt to standard error; false when a caught signal interrupted it.
    private static func writeToTerminal(_ text: String) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes = bytes.dropFirst(count)
            } else if count < 0 && errno == EINTR {
                if promptCaughtSignals.load(ordering: .sequentiallyConsistent) != 0 { return false }
            } else {
                return true  // standard error closed or full: the prompt is still read, as before
            }
        }
        return true
    }

    /// Puts the terminal settings back and ends the prompt's line, with SIGTTOU and SIGTTIN
    /// blocked here: a job moved to the background at the prompt (Ctrl-Z, `bg`) would otherwise
    /// be sent SIGTTOU, which the handler catches, and retry for ever with echo off.
    private static func restoreTerminal(_ original: inout termios) {
        var jobControl = signalSet([SIGTTOU, SIGTTIN])
        var previousMask = sigset_t()
        let blocked = pthread_sigmask(SIG_BLOCK, &jobControl, &previousMask) == 0
        var attempts = 0
        while tcsetattr(STDIN_FILENO, TCSAFLUSH, &original) != 0, errno == EINTR, attempts < 100 { attempts += 1 }
        _ = writeToTerminal("\n")
        if blocked { pthread_sigmask(SIG_SETMASK, &previousMask, nil) }
    }

    private enum Wait {
        case readable
        case signal
        case failed(Int32)
    }

    /// Until standard input has input (or hung up) or a signal was caught.
    private static func waitForInput(wake: Int32) -> Wait {
        while true {
            if promptCaughtSignals.load(ordering: .sequentiallyConsistent) != 0 { return .signal }
            var polled = [
                pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&polled, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failed(errno)
            }
            if promptCaughtSignals.load(ordering: .sequentiallyConsistent) != 0 { return .signal }
            if polled[0].revents != 0 { return .readable }
            PromptWakePipe.drain(wake)  // a byte without a signal: a handler of an earlier prompt
        }
    }

    /// The caught signals, in ascending order.
    private static func caughtSignals() -> [Int32] {
        let bits = promptCaughtSignals.load(ordering: .sequentiallyConsistent)
        return (1..<64).filter { bits & (1 << UInt64($0)) != 0 }.map { Int32($0) }
    }

    /// Raises `signal` on this thread with it unblocked here: the prompt may run on a Dispatch
    /// thread, which blocks such signals, and an unblocked signal is delivered before raise(3)
    /// returns (a stop, until the process is continued).
    private static func resend(_ signal: Int32) {
        var only = signalSet([signal])
        var previousMask = sigset_t()
        let unblocked = pthread_sigmask(SIG_UNBLOCK, &only, &previousMask) == 0
        raise(signal)
        if unblocked { pthread_sigmask(SIG_SETMASK, &previousMask, nil) }
    }

    private static func signalSet(_ signals: [Int32]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        return set
    }

    /// Installs the handler for each interrupting signal the process does not ignore (an ignored
    /// one stays ignored: SIGPIPE, which the CLI ignores, or a `trap ''` of the shell), and
    /// returns the dispositions it replaced.
    private static func installHandlers() -> [(number: Int32, action: sigaction)] {
        interruptingSignals.compactMap { number in
            var previous = sigaction()
            guard sigaction(number, nil, &previous) == 0, !isIgnored(previous) else { return nil }
            var action = sigaction()
            #if canImport(Glibc)
                action.__sigaction_handler.sa_handler = promptSignalHandler
            #else
                action.__sigaction_u.__sa_handler = promptSignalHandler
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            guard sigaction(number, &action, &previous) == 0 else { return nil }
            return (number, previous)
        }
    }

    private static func isIgnored(_ action: sigaction) -> Bool {
        #if canImport(Glibc)
            let handler = action.__sigaction_handler.sa_handler
        #else
            let handler = action.__sigaction_u.__sa_handler
        #endif
        guard let handler else { return false }  // SIG_DFL
        return unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// Puts the previous dispositions back; one that cannot be put back keeps the prompt's
    /// handler, which then only records the signal (no prompt is listening).
    private static func restoreHandlers(_ previous: [(number: Int32, action: sigaction)]) {
        for (number, action) in previous {
            var action = action
            _ = sigaction(number, &action, nil)
        }
    }
}

/// The signals caught during a prompt (bit n: signal n), for the one prompt at a time (the CLI
/// prompts from one thread), and the wake pipe's write end. Both are made before any handler is
/// installed, so the handler only does atomic operations and write(2), which are
/// async-signal-safe.
private let promptCaughtSignals = Atomic<UInt64>(0)
private let promptWakeWriteEnd = Atomic<Int32>(-1)

private func promptSignalHandler(_ number: Int32) {
    let savedErrno = errno
    if number > 0 && number < 64 {
        _ = promptCaughtSignals.bitwiseOr(1 << UInt64(number), ordering: .sequentiallyConsistent)
    }
    var byte: UInt8 = 1
    _ = write(promptWakeWriteEnd.load(ordering: .sequentiallyConsistent), &byte, 1)
    errno = savedErrno
}

/// The prompt's self-pipe: made once per process (non-blocking, close-on-exec) and never closed,
/// so that a handler still running when a prompt ends never writes to a descriptor number
/// reused since. Drained before each prompt.
private enum PromptWakePipe {
    /// The read end, or nil when no pipe could be made.
    static let readEnd: Int32? = {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            let flags = fcntl(end, F_GETFL)
            guard flags >= 0, fcntl(end, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(end, F_SETFD, FD_CLOEXEC) == 0
            else {
                for end in ends { _ = close(end) }
                return nil
            }
        }
        promptWakeWriteEnd.store(ends[1], ordering: .sequentiallyConsistent)
        return ends[0]
    }()

    static func drain(_ readEnd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }
}

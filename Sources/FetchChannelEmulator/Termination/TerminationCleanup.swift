import DeviceSigning
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a process must undo when SIGINT, SIGTERM or SIGHUP ends it: the children it started and
/// the temporary directories it made. `fetchchannel demo`, `fetchchannel bench` and
/// `fetchchannel-bench` catch those signals while they run (``catchingSignals()``); on one, every
/// registered undo runs, newest first (a software TPM's swtpm is killed and reaped before its
/// state directory goes), and then the process dies of that same signal, as it would have without
/// the catch: the shell sees 128 + its number. A signal the process ignores stays ignored.
///
/// Whoever makes something registers its undo in the same step (``register(_:undo:)``), and on
/// its normal path undoes it through the registration (``Registration/undo()``), which runs the
/// undo and drops it; undos are idempotent, so one that the signal's cleanup ran as well does no
/// harm. A `SoftwareTPM` registers itself; the demo's and the bench's key stores are made by
/// ``makeTemporaryDirectory(prefix:)``.
///
/// The cleanup runs on the queue of the signal sources (``TerminationSignals``: an ordinary
/// thread, as for `serve`, so it may kill, wait and remove) and holds the registry's lock until
/// the process has died. Other threads go on meanwhile, but none can make and register anything
/// more, undo an entry or leave ``catchingSignals()``'s scope: each waits on that lock for the
/// end. So a command never exits on its own while the cleanup runs (its work failing because
/// swtpm was killed leads it there), and nothing made after the cleanup's list was taken escapes
/// it. A second signal during the cleanup waits behind it on the queue: the cleanup finishes, and
/// the process dies of the first. SIGQUIT and SIGKILL still end the process at once, leaving
/// what the cleanup had not yet undone.
package enum TerminationCleanup {
    private struct Entry {
        let id: UInt64
        let undo: @Sendable () -> Void
    }

    /// The registered undos, oldest first, and the next id. The cleanup takes the lock and keeps it.
    private static let registry = Locked<(entries: [Entry], nextId: UInt64)>(([], 0))

    /// One registered undo.
    package struct Registration: Sendable {
        fileprivate let id: UInt64
        fileprivate let action: @Sendable () -> Void

        /// Runs the undo now, on this thread, then drops it: the owner's normal path. Idempotent.
        /// During a signal's cleanup it waits for the process's end after the undo.
        package func undo() {
            action()
            TerminationCleanup.registry.withLock { registry in registry.entries.removeAll { $0.id == id } }
        }
    }

    /// Runs `make` and registers `undo` for what it made, in one step that a signal's cleanup
    /// never overlaps: once the cleanup has begun, this waits for the process's end and makes
    /// nothing. `make` must be short (a mkdir, a spawn): other registrations wait for it. `undo`
    /// must be idempotent, must not call into this type, and may run on any thread.
    package static func register<Made: Sendable, Failure: Error>(
        _ make: () throws(Failure) -> Made, undo: @escaping @Sendable (Made) -> Void
    ) throws(Failure) -> (Made, Registration) {
        try registry.withLock { (registry) throws(Failure) -> (Made, Registration) in
            let made = try make()
            let action: @Sendable () -> Void = { undo(made) }
            let id = registry.nextId
            registry.nextId += 1
            registry.entries.append(Entry(id: id, undo: action))
            return (made, Registration(id: id, action: action))
        }
    }

    /// A new directory `<prefix>XXXXXX` (mode 0700) in the temporary directory, removed with all
    /// it holds by the registration's undo or a caught signal. A key store made in it must not
    /// create it again when missing (`createIfMissing: false`): removed by a signal's cleanup
    /// while the work goes on, it must stay removed.
    package static func makeTemporaryDirectory(prefix: String) throws(MakeDirectoryFailure) -> (URL, Registration) {
        let base = FileManager.default.temporaryDirectory.path
        let (path, registration) = try register(
            { () throws(MakeDirectoryFailure) -> String in
                var template = Array("\(base)/\(prefix)XXXXXX".utf8CString)
                guard let made = mkdtemp(&template) else {  // mkdtemp creates it 0700
                    throw MakeDirectoryFailure(base: base, code: errno)
                }
                return String(cString: made)
            }, undo: { removeDirectory(atPath: $0) })
        return (URL(fileURLWithPath: path, isDirectory: true), registration)
    }

    /// Removes `path` and everything in it, again while something another thread writes there
    /// meanwhile makes a removal fail (a directory no longer empty): a bounded number of times.
    package static func removeDirectory(atPath path: String) {
        for _ in 0..<16 {
            guard (try? FileManager.default.removeItem(atPath: path)) == nil else { return }
            guard FileManager.default.fileExists(atPath: path) else { return }
        }
    }

    /// The reason a temporary directory could not be made.
    package struct MakeDirectoryFailure: Error, CustomStringConvertible {
        package let base: String
        package let code: Int32

        package var description: String {
            "cannot create a temporary directory under \(base): \(String(cString: strerror(code)))"
        }
    }

    /// Catches SIGINT, SIGTERM and SIGHUP (those the process does not ignore) until the scope's
    /// ``Scope/close()``: one scope at a time, around a command's work. Returns once they are
    /// caught.
    package static func catchingSignals() async -> Scope {
        let queue = DispatchQueue(label: "fetchchannel.termination-cleanup")
        let signals = await TerminationSignals.catching(keepingIgnored: true, on: queue) { cleanUp(dyingOf: $0) }
        return Scope(signals: signals)
    }

    /// The signals caught for the cleanup.
    package final class Scope: Sendable {
        private let signals: TerminationSignals

        fileprivate init(signals: TerminationSignals) {
            self.signals = signals
        }

        /// The signals caught (those of SIGINT, SIGTERM and SIGHUP the process did not ignore).
        package var caught: [Int32] { signals.caught }

        /// Stops catching and puts the dispositions of before back; during a signal's cleanup,
        /// waits for the process's end instead (the command must not exit 0 or 1 meanwhile).
        /// Idempotent.
        package func close() {
            registry.withLock { _ in signals.release() }
        }
    }

    /// Runs every undo, newest first, then dies of `number`. Keeps the registry's lock to the end.
    private static func cleanUp(dyingOf number: Int32) {
        registry.withLock { registry in
            for entry in registry.entries.reversed() { entry.undo() }
            registry.entries.removeAll()
            die(of: number)
        }
    }

    /// Puts the default action of `number` back and raises it on this thread, unblocked here
    /// (Dispatch's threads block every signal): the process ends as the signal's default action
    /// ends it, before raise returns. Should that fail, it exits with the status a shell shows
    /// for such a death.
    private static func die(of number: Int32) -> Never {
        var action = sigaction()
        #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = SIG_DFL
        #else
            action.__sigaction_u.__sa_handler = SIG_DFL
        #endif
        var only = sigset_t()
        if sigemptyset(&action.sa_mask) == 0, sigaction(number, &action, nil) == 0, sigemptyset(&only) == 0,
            sigaddset(&only, number) == 0, pthread_sigmask(SIG_UNBLOCK, &only, nil) == 0
        {
            _ = raise(number)  // does not return when it worked
        }
        _exit(128 + number)
    }
}

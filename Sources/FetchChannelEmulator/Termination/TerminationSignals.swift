import DeviceSigning
import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// SIGINT, SIGTERM and SIGHUP (Ctrl-C, `kill`, a closed terminal) handed to a handler on a serial
/// Dispatch queue instead of ending the process: `serve` waits for one to stop cleanly (the CLI's
/// `SignalWaiter`), and `demo` and the bench undo what they started before dying of it
/// (``TerminationCleanup``).
///
/// Dispatch signal sources, as `serve` has used from the start, rather than a handler of our own
/// or a sigwait thread: the handler runs on an ordinary thread, where it may lock, allocate, kill
/// and reap a child and remove a directory, none of which a signal handler may do (only
/// async-signal-safe calls are allowed there); and sigwait needs the signals blocked in every
/// thread, which a process whose libraries start threads cannot promise. On Linux Dispatch reads
/// the signals from a descriptor and catches them with a handler of its own that only forwards
/// them to its thread; a child spawned meanwhile starts with the default action, as a handler is
/// not inherited across exec (an ignored signal is).
package final class TerminationSignals: Sendable {
    package static let numbers: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// The signals caught, in the order of ``numbers``.
    package let caught: [Int32]
    private let state: Locked<(sources: [any DispatchSourceSignal], previous: [(Int32, sigaction)])?>

    private init(caught: [Int32], sources: [any DispatchSourceSignal], previous: [(Int32, sigaction)]) {
        self.caught = caught
        state = Locked((sources, previous))
    }

    /// Catches ``numbers`` until ``release()``, handing each arrival to `handler` on `queue`, and
    /// returns once every source is registered: a signal sent after the return is never lost.
    /// With `keepingIgnored`, a signal the process ignores stays ignored (`nohup`, a shell's
    /// `trap '' HUP`, an `&` job's SIGINT); without, it is caught too (`serve` has always been).
    package static func catching(
        keepingIgnored: Bool, on queue: DispatchQueue, handler: @escaping @Sendable (Int32) -> Void
    ) async -> TerminationSignals {
        var caught: [Int32] = []
        var previous: [(Int32, sigaction)] = []
        var sources: [any DispatchSourceSignal] = []
        // Dispatch registers a source on its own thread after `resume()` returns: `serve` prints
        // its URL, and `demo` starts its work, only once every source is registered.
        let registered = DispatchGroup()
        for number in numbers {
            var before = sigaction()
            // Cannot fail for these numbers; were it to, the signal would keep its action.
            guard sigaction(number, nil, &before) == 0 else { continue }
            if keepingIgnored && handlerAddress(before) == handlerAddress(of: SIG_IGN) { continue }
            #if canImport(Darwin)
                // Darwin's sources observe a signal beside its action: the default must go first.
                signal(number, SIG_IGN)
            #endif
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            sources.append(source)
            caught.append(number)
            previous.append((number, before))
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            registered.notify(queue: queue) { continuation.resume() }
        }
        for (number, before) in previous { Forwarders.ensureInstalled(number, before: before) }
        return TerminationSignals(caught: caught, sources: sources, previous: previous)
    }

    /// Stops catching and puts each signal's disposition of before back (a second Ctrl-C during a
    /// shutdown that hangs then ends the process). Idempotent.
    package func release() {
        let taken = state.withLock { state in
            defer { state = nil }
            return state
        }
        guard let taken else { return }
        for source in taken.sources { source.cancel() }
        for (number, action) in taken.previous {
            var action = action
            // Cannot fail for an action read from the same signal.
            _ = sigaction(number, &action, nil)
        }
    }

    /// The handler address of `action`: 0 for SIG_DFL.
    static func handlerAddress(_ action: sigaction) -> Int {
        #if canImport(Glibc)
            handlerAddress(of: action.__sigaction_handler.sa_handler)
        #else
            handlerAddress(of: action.__sigaction_u.__sa_handler)
        #endif
    }

    static func handlerAddress(of handler: (@convention(c) (Int32) -> Void)?) -> Int {
        handler.map { unsafeBitCast($0, to: Int.self) } ?? 0
    }

    /// Dispatch on Linux installs its forwarding handler for a signal when the signal's first
    /// source in the process registers, and never again; ``release()`` puts the disposition of
    /// before back over it. So the forwarder seen the first time is kept, and installed again by a
    /// later catch whose registration left the disposition as it was (a second `SignalWaiter` in
    /// one process; a test). Without it, that catch's signals would take their default action.
    private enum Forwarders {
        private static let known = Locked<[Int32: sigaction]>([:])

        static func ensureInstalled(_ number: Int32, before: sigaction) {
            #if !canImport(Darwin)  // Darwin's sources use kqueue: no handler of Dispatch's own
                var current = sigaction()
                guard sigaction(number, nil, &current) == 0 else { return }
                known.withLock { known in
                    if handlerAddress(current) != handlerAddress(before) {
                        if known[number] == nil { known[number] = current }  // Dispatch's, just installed
                    } else if var forwarder = known[number] {
                        // Cannot fail for an action read from the same signal.
                        _ = sigaction(number, &forwarder, nil)
                    }
                }
            #endif
        }
    }
}

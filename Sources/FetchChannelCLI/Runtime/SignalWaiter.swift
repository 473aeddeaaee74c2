import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Waits for SIGINT or SIGTERM with Dispatch signal sources: the default action (terminating the
/// process) is switched off, so the caller can stop cleanly and exit 0.
enum SignalWaiter {
    /// The first signal to arrive and the waiter to hand it to, whichever comes first.
    private final class Arrival: Sendable {
        private let state = Mutex<(signal: Int32?, continuation: CheckedContinuation<Int32, Never>?)>((nil, nil))

        func deliver(_ number: Int32) {
            let continuation = state.withLock { state -> CheckedContinuation<Int32, Never>? in
                guard state.signal == nil else { return nil }
                state.signal = number
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.resume(returning: number)
        }

        func wait() async -> Int32 {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
                let already = state.withLock { state -> Int32? in
                    if let signal = state.signal { return signal }
                    state.continuation = continuation
                    return nil
                }
                if let already { continuation.resume(returning: already) }
            }
        }
    }

    /// Returns the signal that arrived; or nil, at once, when `onInstalled` (run once the handlers
    /// are in place) says not to wait (it returns false).
    static func waitForTermination(onInstalled: () -> Bool = { true }) async -> Int32? {
        let arrival = Arrival()
        let queue = DispatchQueue(label: "fetchchannel.signals")
        var sources: [any DispatchSourceSignal] = []
        // Dispatch installs a source's handler on its own thread after `resume()` returns; until
        // then the signal is ignored (below), and one sent in between was lost: a script that
        // signalled as soon as it read the URL could wait for ever. So `onInstalled` (which prints
        // the URL) waits for every source's registration.
        let registered = DispatchGroup()
        var previous: [(Int32, sighandler_t?)] = []
        // SIGHUP too: a closed terminal stops the command as Ctrl-C does, and it cleans up the same.
        for number in [SIGINT, SIGTERM, SIGHUP] {
            // Ignore the default disposition first, then let Dispatch deliver the signal.
            previous.append((number, signal(number, SIG_IGN)))
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { arrival.deliver(number) }
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            sources.append(source)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            registered.notify(queue: queue) { continuation.resume() }
        }
        let number = onInstalled() ? await arrival.wait() : nil
        for source in sources { source.cancel() }
        // The dispositions of before: a second Ctrl-C during a shutdown that hangs ends the
        // process, instead of being ignored for good.
        for (number, handler) in previous { signal(number, handler) }
        return number
    }
}

import Dispatch
import FetchChannelEmulator
import Synchronization

/// Waits for SIGINT, SIGTERM or SIGHUP, caught by ``TerminationSignals`` (Dispatch signal sources):
/// their default action (ending the process) is off while it waits, so the caller can stop cleanly
/// and exit 0.
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
        // SIGHUP too: a closed terminal stops the command as Ctrl-C does, and it cleans up the
        // same. Caught even when ignored (`nohup`), as serve always has been. The catch returns
        // once every source is registered: one sent in between would be lost, and a script that
        // signalled as soon as it read the URL could wait for ever. So `onInstalled` (which prints
        // the URL) runs only now.
        let signals = await TerminationSignals.catching(
            keepingIgnored: false, on: DispatchQueue(label: "fetchchannel.signals")
        ) { arrival.deliver($0) }
        let number = onInstalled() ? await arrival.wait() : nil
        // The dispositions of before: a second Ctrl-C during a shutdown that hangs ends the
        // process, instead of being ignored for good.
        signals.release()
        return number
    }
}

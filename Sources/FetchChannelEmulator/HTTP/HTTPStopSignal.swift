internal import CDeviceSigningShim
import Glibc
import Synchronization

/// The server's stop signal: a pipe that stop() writes one byte to and nobody ever reads, so its read
/// end stays readable and every poll() that includes it wakes up, now and later.
///
/// Each server thread holds a reference; the descriptors are closed in deinit, when the last holder
/// is gone, so no thread can poll a closed (or reused) descriptor. When stop() runs on another
/// thread it joins every server thread and drops the server's reference, so the pipe is closed
/// before stop() returns.
final class HTTPStopSignal: Sendable {
    let readFD: Int32
    let writeFD: Int32
    private let signalled = Atomic<Bool>(false)

    init() throws(HTTPServerError) {
        var descriptors: [Int32] = [-1, -1]
        // Set up as the listener: not inherited by child processes, never blocks the writer.
        guard dss_pipe_cloexec_nonblocking(&descriptors) == 0 else {
            throw HTTPServerError(.socketFailed, "cannot create the stop pipe", errno: errno)
        }
        readFD = descriptors[0]
        writeFD = descriptors[1]
    }

    /// Cheap check between requests, without a system call.
    var isSignalled: Bool {
        signalled.load(ordering: .acquiring)
    }

    /// Wakes every waiting server thread; idempotent.
    func signal() {
        guard !signalled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        while true {
            let written = write(writeFD, &byte, 1)
            // EAGAIN cannot happen on an empty pipe, and would mean it is already readable anyway.
            if written < 0 && errno == EINTR { continue }
            return
        }
    }

    deinit {
        HTTPSocket.closeDescriptor(readFD)
        HTTPSocket.closeDescriptor(writeFD)
    }
}

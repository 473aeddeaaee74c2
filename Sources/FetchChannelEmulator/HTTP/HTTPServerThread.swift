import Glibc

/// Joinable POSIX threads for the server.
///
/// Foundation's `Thread` and Dispatch cannot be joined, and stop() promises that no server thread
/// runs once it returns; pthread_join is the only exact way to keep that promise.
enum HTTPServerThread {
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts a thread running `body`; returns the thread or the pthread_create error code.
    static func spawn(stackSize: Int, _ body: @escaping @Sendable () -> Void) -> Result<pthread_t, HTTPServerError> {
        var attributes = pthread_attr_t()
        let initResult = pthread_attr_init(&attributes)
        guard initResult == 0 else {
            return .failure(HTTPServerError(.threadStartFailed, "pthread_attr_init failed", errno: initResult))
        }
        defer { pthread_attr_destroy(&attributes) }
        let stackResult = pthread_attr_setstacksize(&attributes, stackSize)
        guard stackResult == 0 else {
            return .failure(
                HTTPServerError(.threadStartFailed, "invalid thread stack size \(stackSize)", errno: stackResult))
        }

        // The retained box is released by the thread, or here if the thread never starts.
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, &attributes,
            { raw in
                guard let raw else { return nil }
                let body = Unmanaged<Body>.fromOpaque(raw).takeRetainedValue()
                body.run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return .failure(HTTPServerError(.threadStartFailed, "pthread_create failed", errno: result))
        }
        return .success(thread)
    }

    /// Waits for `thread` to finish and releases it. Joining the calling thread itself would
    /// deadlock (EDEADLK), so that case detaches instead: it finishes on its own after returning.
    static func join(_ thread: pthread_t) {
        if pthread_equal(thread, pthread_self()) != 0 {
            let result = pthread_detach(thread)
            assert(result == 0, "pthread_detach failed: \(result)")
            return
        }
        let result = pthread_join(thread, nil)
        // ESRCH/EINVAL would mean a thread joined twice: a bookkeeping bug, caught in debug builds.
        assert(result == 0, "pthread_join failed: \(result)")
    }
}

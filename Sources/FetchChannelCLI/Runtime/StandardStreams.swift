#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Standard streams the process was started without (`<&-`, `>&-`, `2>&-`).
package enum StandardStreams {
    /// Opens /dev/null onto each of descriptors 0, 1 and 2 that is closed, and returns those that
    /// were. Run first, before anything opens a descriptor: the next `open` takes the lowest free
    /// number, and Dispatch's epoll descriptor became standard input, which `encrypt` then read.
    /// /dev/null only holds the number; ``CLIContext/process(closedStandardStreams:)`` still
    /// treats the stream as closed.
    package static func openNullOntoClosed() -> Set<Int32> {
        let closed = Set(
            [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO].filter { fcntl($0, F_GETFD) == -1 && errno == EBADF })
        for descriptor in closed.sorted() {
            // The lowest free number is this one: every smaller standard descriptor is open by now.
            let opened = open("/dev/null", O_RDWR)
            if opened >= 0 && opened != descriptor {
                dup2(opened, descriptor)
                close(opened)
            }
        }
        return closed
    }
}

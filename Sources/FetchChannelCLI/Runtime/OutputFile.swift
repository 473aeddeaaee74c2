import Glibc

/// A new file that a command writes its data to instead of standard output (`--output FILE`): made
/// with mode 0600 from the start, so a secret is never in a file others can open, as it is for a
/// moment in a shell's `> FILE` (created 0644 under the usual umask, narrowed only once the command
/// runs). An existing file or a symbolic link is refused, never overwritten or followed.
struct OutputFile {
    let path: String
    let channel: OutputChannel
    private let descriptor: Int32

    /// Creates `path` (an absolute path).
    init(creating path: String) throws {
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            let reason =
                code == EEXIST
                ? "it exists (a file, a directory or a link); give a new name, or remove it first"
                : String(cString: strerror(code))
            throw CLIFailure(.refusedOutput, "cannot create \(path): \(reason); nothing was written")
        }
        self.path = path
        descriptor = fd
        channel = OutputChannel.on(descriptor: fd)
    }

    /// Flushes the file to disk and closes it; throws (after removing the file) when anything
    /// written to it, or the flush, failed.
    func finish() throws {
        let flushed = fsync(descriptor) == 0 ? nil : String(cString: strerror(errno))
        let closed = close(descriptor) == 0 ? nil : String(cString: strerror(errno))
        guard !channel.hasFailed, flushed == nil, closed == nil else {
            unlink(path)
            let reason = flushed ?? closed ?? "a write failed"
            throw CLIFailure(.refusedOutput, "cannot write \(path) (\(reason)); the file was removed")
        }
    }

    /// Closes and removes the file: the command failed before it was complete.
    func discard() {
        close(descriptor)
        unlink(path)
    }
}

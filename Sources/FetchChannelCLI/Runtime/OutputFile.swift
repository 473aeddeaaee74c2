internal import CDeviceSigningShim
import DeviceSigning
import Glibc

/// A new file that a command writes its data to instead of standard output (`--output FILE`): made
/// with mode 0600 from the start, so a secret is never in a file others can open, as it is for a
/// moment in a shell's `> FILE` (created 0644 under the usual umask, narrowed only once the command
/// runs). An existing file or a symbolic link is refused, never overwritten or followed.
///
/// The data goes to an unnamed file in the target's directory (`O_TMPFILE`), linked under the name
/// only once complete: a command that fails, or is killed (Ctrl-C at a passphrase prompt), leaves
/// nothing behind. Where the file system has no unnamed files, the file is created under its name
/// at once (`O_EXCL`) and removed again on a failure the command sees.
struct OutputFile {
    let path: String
    let channel: OutputChannel
    private let descriptor: Int32
    /// Whether the file is still unnamed (linked by `finish`).
    private let unnamed: Bool

    /// Prepares `path` (an absolute path); refused when anything has that name already.
    init(creating path: String) throws {
        var existing = stat()
        if lstat(path, &existing) == 0 { throw Self.refusal(path, EEXIST) }
        let missing = errno
        guard missing == ENOENT else { throw Self.refusal(path, missing) }
        let directory = Self.directory(of: path)
        var fd = dss_open_unnamed_file(directory)
        unnamed = fd >= 0
        if fd < 0 {
            let code = errno
            // Only a file system without unnamed files falls back; any other error is the answer.
            guard code == EOPNOTSUPP || code == EISDIR || code == EINVAL else { throw Self.refusal(path, code) }
            fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw Self.refusal(path, errno) }
        }
        self.path = path
        descriptor = fd
        channel = OutputChannel.on(descriptor: fd)
    }

    /// Flushes the file to disk, gives it its name (still refused if the name was taken
    /// meanwhile), flushes the directory that holds the name, and closes the file; throws when
    /// anything written to it, a flush or the naming failed, leaving no file.
    func finish() throws {
        var problem = channel.hasFailed ? "a write failed" : nil
        if problem == nil, fsync(descriptor) != 0 { problem = String(cString: strerror(errno)) }
        // Whether the file has its name, which then is this file's (linked exclusively).
        var named = !unnamed
        if problem == nil, unnamed {
            if let code = link() {
                problem = code == EEXIST ? "it was created meanwhile" : String(cString: strerror(code))
            } else {
                named = true
            }
        }
        // The name is an entry of the directory: until that is flushed too, a power loss can
        // lose the file (a private key's backup) whose data was flushed.
        if problem == nil, named {
            do {
                try KeyStoreDirectory.syncDirectory(atPath: Self.directory(of: path))
            } catch {
                problem = FetchChannelCLI.describe(error)
            }
        }
        if close(descriptor) != 0, problem == nil { problem = String(cString: strerror(errno)) }
        guard let problem else { return }
        // Also a file named just before its close failed (a late write error): "no file was left".
        if named { unlink(path) }
        throw CLIFailure(.refusedOutput, "cannot write \(path) (\(problem)); no file was left")
    }

    /// Closes the file and leaves nothing: the command failed before it was complete.
    func discard() {
        close(descriptor)
        if !unnamed { unlink(path) }
    }

    /// Links the unnamed file under `path` (``dss_link_unnamed_file``): nil on success, else the errno.
    private func link() -> Int32? {
        dss_link_unnamed_file(descriptor, path) == 0 ? nil : errno
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }

    private static func refusal(_ path: String, _ code: Int32) -> CLIFailure {
        let reason =
            code == EEXIST
            ? "it exists (a file, a directory or a link); give a new name, or remove it first"
            : String(cString: strerror(code))
        return CLIFailure(.refusedOutput, "cannot create \(path): \(reason); nothing was written")
    }
}

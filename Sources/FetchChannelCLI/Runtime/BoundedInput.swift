import DeviceSigning
import Foundation

/// Reads the files and standard input a command is given (keys, JWS, passphrases) with a bound:
/// at most `maximumBytes + 1` bytes are ever read, so a huge or endless input is refused at once
/// instead of after it was loaded into memory.
enum BoundedInput {
    /// The largest key or JWS file the commands read (64 KiB); one byte more tells it was larger.
    static let maximumFileBytes = 64 * 1024

    /// The whole of `url`, or a `CLIFailure` that names it: unreadable, or larger than
    /// `maximumBytes` (`what` says what the file should have been, e.g. "a key file").
    static func read(_ url: URL, maximumBytes: Int = maximumFileBytes, what: String) throws -> Data {
        let descriptor = openForReading(url.path)
        guard descriptor >= 0 else {
            throw CLIFailure(.unreadableInput, "cannot read \(url.path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        guard var data = read(descriptor, maximumBytes: maximumBytes) else {
            throw CLIFailure(.unreadableInput, "cannot read \(url.path): \(String(cString: strerror(errno)))")
        }
        guard data.count <= maximumBytes else {
            data.withUnsafeMutableBytes { secureZero($0) }  // it may hold a secret all the same
            throw CLIFailure(
                .unreadableInput, "\(url.path) is larger than \(maximumBytes / 1024) KiB; it is not \(what)")
        }
        return data
    }

    /// Opens `path` for reading (close-on-exec, plus `flags`) without blocking in open(2), where a
    /// FIFO that no one writes to would hold the command for ever; reads then block as usual, and
    /// such a FIFO reads as empty. -1 with errno set on failure.
    static func openForReading(_ path: String, flags: Int32 = 0) -> Int32 {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | flags)
        guard descriptor >= 0 else { return -1 }
        let status = fcntl(descriptor, F_GETFL)
        guard status >= 0, fcntl(descriptor, F_SETFL, status & ~O_NONBLOCK) == 0 else {
            let saved = errno
            close(descriptor)
            errno = saved
            return -1
        }
        return descriptor
    }

    /// Up to `maximumBytes + 1` bytes from `descriptor` (until end of file); nil on a read error,
    /// with errno kept and what was read so far zeroed (a passphrase or key file is a secret).
    static func read(_ descriptor: Int32, maximumBytes: Int) -> Data? {
        var data = Data(count: maximumBytes + 1)
        var length = 0
        let failed = data.withUnsafeMutableBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return true }
            while length < buffer.count {
                let count = systemRead(descriptor, base + length, buffer.count - length)
                if count < 0 && errno == EINTR { continue }
                if count < 0 { return true }
                if count == 0 { break }
                length += count
            }
            return false
        }
        guard !failed else {
            let saved = errno
            data.withUnsafeMutableBytes { secureZero($0) }
            errno = saved
            return nil
        }
        data.count = length
        return data
    }
}

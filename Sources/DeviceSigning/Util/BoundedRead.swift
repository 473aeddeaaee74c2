import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a file or descriptor with a bound: at most `maximumBytes + 1` bytes are ever read, so a
/// huge or endless input (a sparse file, /dev/zero) is refused at once instead of after it was
/// loaded into memory; and a path is opened without blocking in open(2), where a FIFO that no one
/// writes to would hold the caller for ever.
package enum BoundedRead {
    /// Opens `path` for reading (close-on-exec, plus `flags`) without blocking in open(2); reads
    /// then block as usual, and such a FIFO reads as empty. -1 with errno set on failure.
    package static func openForReading(_ path: String, flags: Int32 = 0) -> Int32 {
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

    /// Up to `maximumBytes + 1` bytes from `descriptor` (until end of file): more than
    /// `maximumBytes` means the input was larger. Nil on a read error, with errno kept and what
    /// was read so far zeroed (a passphrase or key file is a secret). What is returned is a copy
    /// of what was read, and the read buffer is zeroed: shrinking it (`count = length`) would
    /// free it unzeroed when the bytes moved inline (14 bytes or fewer).
    package static func read(_ descriptor: Int32, maximumBytes: Int) -> Data? {
        var data = Data(count: maximumBytes + 1)
        var length = 0
        let failed = data.withUnsafeMutableBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return true }
            while length < buffer.count {
                #if canImport(Glibc)
                    let count = Glibc.read(descriptor, base + length, buffer.count - length)
                #else
                    let count = Darwin.read(descriptor, base + length, buffer.count - length)
                #endif
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
        let read = data.withUnsafeBytes { buffer in
            buffer.baseAddress.map { Data(bytes: $0, count: length) } ?? Data()
        }
        data.withUnsafeMutableBytes { secureZero($0) }
        return read
    }

    /// The whole of the file at `path`, or why not (errno's text, or that it is larger than
    /// `maximumBytes`).
    package static func contents(of path: String, maximumBytes: Int) -> Result<Data, BoundedReadFailure> {
        let descriptor = openForReading(path)
        guard descriptor >= 0 else { return .failure(.unreadable(errno)) }
        defer { close(descriptor) }
        guard var data = read(descriptor, maximumBytes: maximumBytes) else { return .failure(.unreadable(errno)) }
        guard data.count <= maximumBytes else {
            data.withUnsafeMutableBytes { secureZero($0) }
            return .failure(.tooLarge(maximumBytes))
        }
        return .success(data)
    }
}

/// Why ``BoundedRead/contents(of:maximumBytes:)`` read nothing.
package enum BoundedReadFailure: Error, CustomStringConvertible {
    /// open(2) or read(2) failed with this errno.
    case unreadable(Int32)
    /// The file holds more than this many bytes.
    case tooLarge(Int)

    package var description: String {
        switch self {
        case .unreadable(let code): String(cString: strerror(code))
        case .tooLarge(let limit): "larger than \(limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit >> 10) KiB")"
        }
    }
}

import DeviceSigning
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a vector file or a Wycheproof suite: a regular file of at most `maximumBytes`.
///
/// ``BoundedRead`` opens the path without blocking and bounds what it reads, but a FIFO whose
/// writer never writes still blocks the read, and `vectors verify` with it, for ever. So the
/// descriptor it opened must be a regular file (fstat, so the file checked is the file read);
/// anything else is refused unread. `BoundedRead` itself still reads pipes for its other callers
/// (a passphrase file may be one).
enum VectorFileRead {
    /// Why a vector file was not read.
    enum Failure: Error, CustomStringConvertible {
        /// Not a regular file: what it is instead (a FIFO, a directory, a device, a socket).
        case notRegularFile(String)
        /// It could not be opened or read, or it is too large.
        case read(BoundedReadFailure)

        var description: String {
            switch self {
            case .notRegularFile(let kind): "not a regular file but \(kind)"
            case .read(let failure): failure.description
            }
        }
    }

    static func contents(of path: String, maximumBytes: Int) -> Result<Data, Failure> {
        let descriptor = BoundedRead.openForReading(path, flags: O_NOCTTY)
        guard descriptor >= 0 else { return .failure(.read(.unreadable(errno))) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .failure(.read(.unreadable(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { return .failure(.notRegularFile(kind(info.st_mode))) }
        guard info.st_size <= maximumBytes else { return .failure(.read(.tooLarge(maximumBytes))) }
        // The file may grow after fstat: the bound holds for what is read.
        guard let data = BoundedRead.read(descriptor, maximumBytes: maximumBytes) else {
            return .failure(.read(.unreadable(errno)))
        }
        guard data.count <= maximumBytes else { return .failure(.read(.tooLarge(maximumBytes))) }
        return .success(data)
    }

    /// What a file that is not regular is, for the message.
    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "of type \(String(mode & S_IFMT, radix: 8))"
        }
    }
}

import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a command writes: standard output or standard error (unbuffered `write(2)`, so a line
/// is out before the next step starts, even into a pipe), or memory for in-process tests.
package final class OutputChannel: Sendable {
    private let descriptor: Int32?
    /// A standard stream the process was started without: every write fails (``closed()``).
    private let isClosed: Bool
    private let memory = Mutex<[UInt8]>([])
    private let writeFailed = Atomic<Bool>(false)

    private init(descriptor: Int32?, isClosed: Bool = false) {
        self.descriptor = descriptor
        self.isClosed = isClosed
    }

    package static let standardOutput = OutputChannel(descriptor: STDOUT_FILENO)
    package static let standardError = OutputChannel(descriptor: STDERR_FILENO)

    /// A channel on `descriptor`, which the caller keeps open while it writes and then closes
    /// (``OutputFile``).
    package static func on(descriptor: Int32) -> OutputChannel {
        OutputChannel(descriptor: descriptor)
    }

    /// A standard stream the process was started without (`>&-`): every write fails, as it would
    /// have on the closed descriptor, so the command says it could not write. /dev/null holds the
    /// descriptor's number (``StandardStreams``) and gets nothing.
    package static func closed() -> OutputChannel {
        OutputChannel(descriptor: nil, isClosed: true)
    }

    /// A channel that keeps everything written to it (see `captured`).
    package static func inMemory() -> OutputChannel {
        OutputChannel(descriptor: nil)
    }

    /// Whether the channel is a terminal (never for memory).
    package var isTerminal: Bool {
        descriptor.map { isatty($0) == 1 } ?? false
    }

    /// Before a secret is written: when the channel is a regular file (a shell's `> key.pem`,
    /// created 0644 under the usual umask), makes it readable and writable by its owner only
    /// (0600). Nothing to do for a terminal, a pipe or memory. Returns why it could not, or nil.
    package func restrictRegularFileToOwner() -> String? {
        guard let descriptor else { return nil }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return String(cString: strerror(errno)) }
        guard status.st_mode & S_IFMT == S_IFREG else { return nil }
        guard fchmod(descriptor, 0o600) == 0 else { return String(cString: strerror(errno)) }
        return nil
    }

    /// True once a write failed (for example standard output closed by the reader).
    package var hasFailed: Bool { writeFailed.load(ordering: .relaxed) }

    /// What an in-memory channel received.
    package var captured: [UInt8] { memory.withLock { $0 } }

    package var capturedText: String { String(decoding: captured, as: UTF8.self) }

    package func write(_ text: String) {
        write(bytes: Array(text.utf8))
    }

    /// Writes `text` followed by a newline.
    package func line(_ text: String) {
        write(text + "\n")
    }

    package func write(bytes: [UInt8]) {
        bytes.withUnsafeBytes { write(buffer: $0) }
    }

    /// Writes the bytes of `buffer` where they are: a secret (a decrypted plaintext) is written
    /// from its own zeroed-on-release storage, without an ordinary copy for the write.
    package func write(buffer: UnsafeRawBufferPointer) {
        guard !isClosed else {
            if !buffer.isEmpty { writeFailed.store(true, ordering: .relaxed) }
            return
        }
        guard let descriptor else {
            memory.withLock { $0.append(contentsOf: buffer) }
            return
        }
        var offset = 0
        while offset < buffer.count {
            let written = systemWrite(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                // A non-blocking descriptor (the caller's pipe) that is full: wait until it
                // takes more, as a blocking write would have. A reader that goes away ends it
                // (POLLERR, then EPIPE).
                var ready = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                if poll(&ready, 1, -1) < 0 && errno != EINTR {
                    writeFailed.store(true, ordering: .relaxed)
                    return
                }
            } else {
                writeFailed.store(true, ordering: .relaxed)
                return
            }
        }
    }
}

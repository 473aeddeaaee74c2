import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The key store's directory, opened and checked once. Every file operation is relative to the
/// kept descriptor (`openat`, `renameat`, `unlinkat`), so renaming or replacing the path after
/// the checks cannot redirect a read or a write.
///
/// Files are created with `O_CREAT|O_EXCL|O_NOFOLLOW` and mode 0600 and never chmod-ed; they
/// replace their target only by `rename` after an `fsync`, followed by an `fsync` of the directory.
/// The exceptions are empty lock files (``lockFile(_:)``), opened or created in place: a claim's,
/// and the store's own (``storeLockName``). Writers hold an exclusive lock (a mutex inside the
/// process, `flock` on the store's lock file across processes) for the whole life of their
/// temporary files, so a temporary file found while holding the lock was left by a crash.
///
/// The store's lock is a file, not the directory: an NFS client emulates `flock` with a whole-file
/// `fcntl` lock, which needs a descriptor open for writing, and a directory cannot be opened so
/// (the lock failed with EBADF, and no command could use a store in an NFS home).
///
/// `package`: FetchChannel's persisted redeemed-token set writes through it too, so the package
/// has one atomic-write implementation.
package final class KeyStoreDirectory: Sendable {
    package let path: String
    /// What the directory holds, in error messages ("key store").
    package let store: String
    private let descriptor: Int32
    /// Serializes writers in this process (flock serializes processes). A plain NSLock: a
    /// `Locked<Void>` gave ThreadSanitizer a zero-sized stored value to report false races on.
    private let writers = NSLock()
    /// Test hook: called with the target name just before each rename of `writeAtomically`;
    /// throwing from it interrupts the save there, as a crash would (except that the temporary
    /// file is removed at once instead of at the next open).
    let beforeRename = Locked<(@Sendable (String) throws -> Void)?>(nil)
    /// Test hook: called at the start of each `withExclusiveLock`, before the lock is taken; what
    /// another writer does there happens between a caller's preparation and its commit.
    let beforeLock = Locked<(@Sendable () throws -> Void)?>(nil)

    /// The store's write lock (``withExclusiveLock(_:)``): an empty file, made when the store is
    /// first opened (the clean-up takes the lock) or written. Removing it by hand while a writer
    /// holds it would let the next writer in beside that one: it stays.
    package static let storeLockName = ".fetchchannel-lock"

    /// A temporary file's name: this prefix and 32 lowercase hex digits. The clean-up at open
    /// removes only names of exactly that form: the directory may be an application's own (the
    /// redeemed-token file's), where another component's `.tmp-` file is not this package's.
    package static let temporaryPrefix = ".fetchchannel-tmp-"

    /// Whether `name` is a temporary file name of earlier versions: `.tmp-` and 1 to 32 lowercase
    /// hex digits.
    static func isEarlierTemporaryName(_ name: String) -> Bool {
        hexDigitCount(after: ".tmp-", in: name).map { (1...32).contains($0) } ?? false
    }

    /// Whether `name` is a temporary file name this package makes.
    static func isTemporaryName(_ name: String) -> Bool {
        hexDigitCount(after: temporaryPrefix, in: name) == 32
    }

    /// How many lowercase hex digits follow `prefix` in `name`, when that is all that follows it.
    private static func hexDigitCount(after prefix: String, in name: String) -> Int? {
        guard name.hasPrefix(prefix) else { return nil }
        let rest = name.utf8.dropFirst(prefix.utf8.count)
        return rest.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } ? rest.count : nil
    }
    /// No file of the store comes near this; anything larger is not one of its files.
    package static let maximumFileBytes = 64 * 1024

    private static let fileTypeMask: mode_t = 0o170000
    private static let regularFile: mode_t = 0o100000
    private static let directoryType: mode_t = 0o040000
    private static let groupAndOtherBits: mode_t = 0o077

    /// Opens (with `createIfMissing`, first creates with mode 0700, missing parents included)
    /// and checks the directory: it must be owned by the effective user and have no group or
    /// other permission bits. A symbolic link to a directory is followed; the checks apply to
    /// the directory it leads to, which is the one kept open.
    ///
    /// `store` names what the directory holds in error messages: "key store", or the store of
    /// another file this type keeps (a redeemed-token store).
    package init(path: String, createIfMissing: Bool, store: String = "key store") throws {
        if createIfMissing { try Self.createDirectories(path, store: store) }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            switch code {
            case ENOENT:
                throw DeviceSigningError(.fileSystem, "The \(store) directory \(path) does not exist.")
            case ENOTDIR:
                throw DeviceSigningError(.fileSystem, "The \(store) path \(path) is not a directory.")
            default:
                throw Self.failure("open the \(store) directory \(path)", code)
            }
        }
        do {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw Self.failure("inspect \(path)", errno) }
            if info.st_uid != geteuid() {
                throw DeviceSigningError(
                    .insecureKeyFile,
                    "The \(store) directory \(path) is owned by uid \(info.st_uid), not by this user (uid \(geteuid())). Use a directory you own, or run: chown \(geteuid()) \(path)"
                )
            }
            if info.st_mode & Self.groupAndOtherBits != 0 {
                throw DeviceSigningError(
                    .insecureKeyFile,
                    "The \(store) directory \(path) is accessible by group or others (mode \(Self.octal(info.st_mode))). Run: chmod 700 \(path)"
                )
            }
        } catch {
            close(fd)
            throw error
        }
        self.path = path
        self.store = store
        self.descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    package func filePath(_ name: String) -> String {
        path.hasSuffix("/") ? path + name : path + "/" + name
    }

    // MARK: Reading

    /// The contents of `name`, which must be a regular file (not a symbolic link), owned by the
    /// effective user, without group or other permission bits, and at most `maximumBytes`.
    package func readFile(_ name: String, maximumBytes: Int = maximumFileBytes) throws -> SecureBytes {
        let file = filePath(name)
        // O_NONBLOCK: opening a FIFO planted under a key's name must not hang; it is refused below.
        let fd = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            switch code {
            case ENOENT:
                throw DeviceSigningError(.keyNotFound, "There is no file \(file).")
            case ELOOP:
                throw DeviceSigningError(
                    .insecureKeyFile,
                    "\(file) is a symbolic link; the \(store) reads only regular files. Replace the link with the file itself."
                )
            default:
                throw Self.failure("open \(file)", code)
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Self.failure("inspect \(file)", errno) }
        let type = info.st_mode & Self.fileTypeMask
        guard type == Self.regularFile else {
            let what = type == Self.directoryType ? "a directory" : "not a regular file"
            throw DeviceSigningError(
                .insecureKeyFile,
                "\(file) is \(what); the \(store) reads only regular files. Move it out of the \(store) directory.")
        }
        guard info.st_uid == geteuid() else {
            throw DeviceSigningError(
                .insecureKeyFile,
                "\(file) is owned by uid \(info.st_uid), not by this user (uid \(geteuid())). Run: chown \(geteuid()) \(file)"
            )
        }
        guard info.st_mode & Self.groupAndOtherBits == 0 else {
            throw DeviceSigningError(
                .insecureKeyFile,
                "\(file) is accessible by group or others (mode \(Self.octal(info.st_mode))); key files must be private. Run: chmod 600 \(file)"
            )
        }
        guard info.st_size <= maximumBytes else {
            throw DeviceSigningError(
                .corruptKeyFile,
                "\(file) is \(info.st_size) bytes; no file of this kind is larger than \(maximumBytes).")
        }
        let size = Int(info.st_size)
        return try SecureBytes(count: size) { buffer in
            var offset = 0
            while offset < size {
                let count = read(fd, buffer.baseAddress! + offset, size - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw Self.failure("read \(file)", errno)
                }
                guard count > 0 else {
                    throw DeviceSigningError(.corruptKeyFile, "\(file) became shorter while it was read.")
                }
                offset += count
            }
        }
    }

    /// The names in the directory, without "." and "..".
    func entries() throws -> [String] {
        // A separate open file description: readdir's position is not shared with `descriptor`.
        let fd = openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure("list \(path)", errno) }
        guard let stream = fdopendir(fd) else {
            let code = errno
            close(fd)
            throw Self.failure("list \(path)", code)
        }
        defer { closedir(stream) }  // closes fd too
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                guard errno == 0 else { throw Self.failure("list \(path)", errno) }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Whether `name` exists (any type; symbolic links are not followed). Only ENOENT is "no":
    /// any other failure is thrown, so that a caller never writes over a file it could not see.
    package func exists(_ name: String) throws -> Bool {
        var info = stat()
        guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) != 0 else { return true }
        let code = errno
        guard code == ENOENT else { throw Self.failure("inspect \(filePath(name))", code) }
        return false
    }

    // MARK: Writing (call inside `withExclusiveLock`)

    /// The longest wait for the write lock. A writer that holds it longer is stopped (Ctrl-Z) or
    /// on a stalled disk; waiting on would hang this one too. A test hook may shorten it.
    let lockWait = Locked<Duration>(.seconds(30))

    /// Runs `body` holding the store's write lock (in this process and across processes); throws
    /// `.fileSystem` when another writer holds it for longer than `lockWait` (measured on the
    /// monotonic clock: a step of the wall clock neither ends the wait early nor stretches it).
    package func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        try beforeLock.withLock { try $0?() }
        let wait = lockWait.withLock { $0 }
        let clock = ContinuousClock()
        let deadline = clock.now + wait
        // Neither the mutex nor flock can wait with a deadline: each is tried without blocking,
        // a little longer between tries each time.
        var pause: useconds_t = 1_000
        func pauseOrGiveUp() throws {
            guard clock.now < deadline else { throw lockTimeout(wait) }
            usleep(pause)
            pause = min(pause * 2, 50_000)
        }
        while !writers.try() { try pauseOrGiveUp() }
        defer { writers.unlock() }
        var held = try lockFile(Self.storeLockName)
        while held == nil {
            try pauseOrGiveUp()
            held = try lockFile(Self.storeLockName)
        }
        defer { Self.release(held) }
        return try body()
    }

    /// Unlocks and closes a descriptor of ``lockFile(_:)``: unlocked first, since a child being
    /// spawned holds a copy of the descriptor until its exec.
    private static func release(_ held: Int32?) {
        guard let held else { return }
        flock(held, LOCK_UN)
        close(held)
    }

    private func lockTimeout(_ wait: Duration) -> DeviceSigningError {
        DeviceSigningError(
            .fileSystem,
            "The lock on \(path) has been held by another writer for more than \(wait); nothing was changed. "
                + "Another command may be stopped (Ctrl-Z) or its disk stalled; let it finish, then try again.")
    }

    /// Replaces (or creates) `name` with `contents`: a new 0600 temporary file in this
    /// directory, written in full, fsync-ed, renamed over `name`, then the directory fsync-ed.
    /// After a crash `name` holds either its old or its new contents, never a part.
    package func writeAtomically(_ name: String, contents: UnsafeRawBufferPointer) throws {
        let temporary =
            Self.temporaryPrefix + Self.hex16(.random(in: .min ... .max)) + Self.hex16(.random(in: .min ... .max))
        let fd = openat(descriptor, temporary, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure("create a file in \(path)", errno) }
        var renamed = false
        defer { if !renamed { unlinkat(descriptor, temporary, 0) } }
        do {
            var offset = 0
            while offset < contents.count {
                let count = write(fd, contents.baseAddress! + offset, contents.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw Self.failure("write \(filePath(temporary))", errno)
                }
                offset += count
            }
            guard fsync(fd) == 0 else { throw Self.failure("flush \(filePath(temporary))", errno) }
        } catch {
            close(fd)
            throw error
        }
        guard close(fd) == 0 else { throw Self.failure("close \(filePath(temporary))", errno) }
        try beforeRename.withLock { try $0?(name) }
        guard renameat(descriptor, temporary, descriptor, name) == 0 else {
            throw Self.failure("rename a temporary file to \(filePath(name))", errno)
        }
        renamed = true
        try syncDirectory()
    }

    /// Gives the file `name` the second name `newName` in this directory (a hard link), durably;
    /// false, and nothing done, when `newName` exists. `name` keeps its contents until it is
    /// replaced. A symbolic link is linked as itself, never followed.
    package func link(_ name: String, as newName: String) throws -> Bool {
        guard linkat(descriptor, name, descriptor, newName, 0) == 0 else {
            guard errno == EEXIST else { throw Self.failure("link \(filePath(name)) as \(filePath(newName))", errno) }
            return false
        }
        try syncDirectory()
        return true
    }

    /// Removes `name`; false if it did not exist. The caller syncs the directory.
    func remove(_ name: String) throws -> Bool {
        guard unlinkat(descriptor, name, 0) == 0 else {
            guard errno == ENOENT else { throw Self.failure("remove \(filePath(name))", errno) }
            return false
        }
        return true
    }

    /// Makes renames and removals in the directory durable.
    func syncDirectory() throws {
        guard fsync(descriptor) == 0 else {
            // Some file systems cannot sync a directory; there is nothing more to do there.
            guard errno == EINVAL || errno == ENOTSUP else { throw Self.failure("flush \(path)", errno) }
            return
        }
    }

    /// Runs `body` holding the store's write lock if no writer holds it now; nil (without
    /// running `body`) if one does.
    /// A lock that cannot be taken at all (a store on a read-only mount, where the lock file
    /// cannot be made) counts as held: `body` is for tidying up, which can wait.
    private func withExclusiveLockIfFree<R>(_ body: () throws -> R) throws -> R? {
        guard writers.try() else { return nil }
        defer { writers.unlock() }
        guard let held = try? lockFile(Self.storeLockName) else { return nil }
        defer { Self.release(held) }
        return try body()
    }

    /// An exclusive `flock` on the file `name` (created empty, 0600, if missing), not waited for:
    /// its descriptor, or nil when another open file holds it (in this process or another). The
    /// caller closes the descriptor to release it. The store's own lock is one (``storeLockName``),
    /// each key's claim another (``KeyStore/claim(_:)``): held across network requests, a claim
    /// must not stop the store's other writers.
    ///
    /// The file must be a regular file of this user. The lock counts only on the file still linked
    /// under `name`: one removed (or replaced) between the open and the lock is opened again (a
    /// few times, then it is an error), so that a holder never keeps a lock on a file that the
    /// name no longer reaches.
    func lockFile(_ name: String) throws -> Int32? {
        for _ in 0..<8 {
            let fd = openat(descriptor, name, O_CREAT | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                let code = errno
                throw Self.failure("open \(filePath(name))", code)
            }
            var opened = stat()
            guard fstat(fd, &opened) == 0 else {
                let code = errno
                close(fd)
                throw Self.failure("inspect \(filePath(name))", code)
            }
            guard opened.st_mode & Self.fileTypeMask == Self.regularFile, opened.st_uid == geteuid() else {
                close(fd)
                throw DeviceSigningError(
                    .insecureKeyFile, "\(filePath(name)) is not a regular file of this user; remove it.")
            }
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let code = errno
                if code == EINTR { continue }
                close(fd)
                if code == EWOULDBLOCK { return nil }
                throw Self.failure("lock \(filePath(name))", code)
            }
            var linked = stat()
            let found = fstatat(descriptor, name, &linked, AT_SYMLINK_NOFOLLOW) == 0
            let code = errno
            if found, linked.st_dev == opened.st_dev, linked.st_ino == opened.st_ino { return fd }
            flock(fd, LOCK_UN)
            close(fd)
            guard found || code == ENOENT else { throw Self.failure("inspect \(filePath(name))", code) }
        }
        throw DeviceSigningError(
            .fileSystem, "\(filePath(name)) keeps being replaced while it is locked; try again.")
    }

    /// Removes the temporary files of writes that never finished (the writer crashed). Only
    /// when no writer holds the lock: a writer's temporary files are its own, and a reader that
    /// opens the store does not wait for a writer (one stopped in its write, or on a stalled
    /// disk, would hold every command); the next opening of the store removes them.
    ///
    /// `includingEarlierNames`: also the `.tmp-` and up to 32 hex digits of earlier versions,
    /// which a crashed save may have left holding a key; only in a directory that is the
    /// package's own (a key store), not one an application shares with others.
    package func removeStaleTemporaryFiles(includingEarlierNames: Bool = false) throws {
        _ = try withExclusiveLockIfFree {
            var removed = false
            for name in try entries()
            where Self.isTemporaryName(name) || (includingEarlierNames && Self.isEarlierTemporaryName(name)) {
                // A non-file under that name (unlink fails) is left alone: it is not ours.
                if (try? remove(name)) == true { removed = true }
            }
            if removed { try syncDirectory() }
        }
    }

    // MARK: Helpers

    /// `value` as 16 lowercase hex digits.
    private static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Creates `path` and its missing parents with mode 0700 (mkdir's mode, never a later chmod;
    /// the umask can only remove bits). Each new directory's parent is fsync-ed, as a renamed
    /// file's directory is: otherwise a crash could lose the new directory, and with it the keys
    /// already written (and fsync-ed) into it.
    private static func createDirectories(_ path: String, store: String) throws {
        var missing: [String] = []
        var current = path
        var info = stat()
        while current.count > 1, stat(current, &info) != 0, errno == ENOENT {
            missing.append(current)
            current = (current as NSString).deletingLastPathComponent
        }
        for directory in missing.reversed() {
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw failure("create the \(store) directory \(directory)", errno)
            }
            // Also when another process made it first: it may not have flushed it yet.
            try syncDirectory(atPath: (directory as NSString).deletingLastPathComponent)
        }
    }

    /// Like ``syncDirectory()``; a parent this user may enter but not read (mode 0300) cannot
    /// be opened to sync and is left as it is. Also for a file named outside a key store (the
    /// CLI's `--output`), whose new name must last as its data does.
    package static func syncDirectory(atPath path: String) throws {
        let parent = open(path.isEmpty ? "." : path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard parent >= 0 else {
            guard errno == EACCES else { throw failure("open \(path) to flush it", errno) }
            return
        }
        defer { close(parent) }
        guard fsync(parent) == 0 || errno == EINVAL || errno == ENOTSUP else {
            throw failure("flush \(path)", errno)
        }
    }

    /// The error of a failed call; `action` is built only here, after the caller read `errno`
    /// (building the text first could change it).
    private static func failure(_ action: @autoclosure () -> String, _ code: Int32) -> DeviceSigningError {
        DeviceSigningError(.fileSystem, "Could not \(action()): \(String(cString: strerror(code))).")
    }

    private static func octal(_ mode: mode_t) -> String {
        let permissions = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - permissions.count)) + permissions
    }
}

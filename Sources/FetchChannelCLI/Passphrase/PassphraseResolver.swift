import DeviceSigning
import Foundation

/// Finds the passphrase of a command, from (in this order) `--passphrase-file FILE`, the
/// `FETCHCHANNEL_PASSPHRASE` environment variable, or a prompt without echo when standard
/// input is a terminal. Never from an argument. With none of them: a `UsageError` (exit 64)
/// that says how to give one.
struct PassphraseResolver {
    static let environmentVariable = EnvironmentPassphrase.variable
    static let maximumFileBytes = 4096

    /// What the passphrase is for, in the words of the prompt and the error messages.
    enum Purpose {
        /// Opening an existing encrypted key.
        case open(keyId: String)
        /// Protecting a key about to be stored (a prompt asks twice).
        case protect(what: String)
        /// Opening an encrypted key file being imported.
        case openFile(path: String)
        /// Opening several keys with one passphrase.
        case openEach(what: String)

        var phrase: String {
            switch self {
            case .open(let keyId): "open key \(keyId)"
            case .protect(let what): "protect \(what)"
            case .openFile(let path): "open the encrypted key in \(path)"
            case .openEach(let what): "open \(what)"
            }
        }
    }

    /// `--passphrase-file FILE`, when given.
    let file: String?
    let context: CLIContext

    func passphrase(for purpose: Purpose, allowsNoEncryption: Bool = false) throws -> SecureBytes {
        if let file {
            return try fromFile(file)
        }
        if let value = context.environmentPassphrase {
            // A passphrase is text. Read as a string (as it once was), each invalid byte became
            // U+FFFD: different passphrases opened the same key. Such bytes are still refused.
            guard EnvironmentPassphrase.isUTF8(value) else {
                throw UsageError(
                    .passphraseUnavailable,
                    "\(Self.environmentVariable) is not UTF-8 text; give a passphrase of other bytes with "
                        + "--passphrase-file FILE")
            }
            guard value.count > 0 else {
                throw UsageError(
                    .passphraseUnavailable,
                    "\(Self.environmentVariable) is set but empty; give it the passphrase, or unset it to be prompted")
            }
            return value
        }
        if let prompt = context.passphrasePrompt {
            return try fromPrompt(prompt, purpose: purpose)
        }
        var message =
            "a passphrase is needed to \(purpose.phrase), and standard input is not a terminal to prompt on: use --passphrase-file FILE or set \(Self.environmentVariable)"
        if allowsNoEncryption {
            message += ", or add --no-encryption to store the key unencrypted (not recommended)"
        }
        throw UsageError(.passphraseUnavailable, message)
    }

    /// The first line of the passphrase file. The file must be the user's own and closed to group
    /// and others (as ssh requires of key files): a passphrase that others can read protects
    /// nothing. Read straight into zeroed storage, never into a Swift array. A symbolic link is
    /// refused: whoever owns the link, not the file, would choose which file is the passphrase.
    private func fromFile(_ path: String) throws -> SecureBytes {
        let url = try context.fileURL(path)
        let descriptor = BoundedRead.openForReading(url.path, flags: O_NOFOLLOW)
        guard descriptor >= 0 else {
            let reason =
                errno == ELOOP
                ? "it is a symbolic link; give the file itself" : String(cString: strerror(errno))
            throw CLIFailure(.passphrase, "cannot read the passphrase file \(url.path): \(reason)")
        }
        defer { close(descriptor) }
        try Self.checkPrivate(descriptor, path: url.path)
        var length = 0
        let contents = try SecureBytes(count: Self.maximumFileBytes + 1) { buffer in
            guard let base = buffer.baseAddress else { return }
            while length < buffer.count {
                let count = read(descriptor, base + length, buffer.count - length)
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else {
                    throw CLIFailure(
                        .passphrase, "cannot read the passphrase file \(url.path): \(String(cString: strerror(errno)))")
                }
                if count == 0 { break }
                length += count
            }
        }
        guard length <= Self.maximumFileBytes else {
            throw CLIFailure(
                .passphrase,
                "the passphrase file \(url.path) is larger than \(Self.maximumFileBytes) bytes; it must hold the passphrase on its first line"
            )
        }
        // The first line: up to the first newline (a trailing CR of CRLF dropped).
        let end = contents.withUnsafeBytes { bytes -> Int in
            var end = bytes[0..<length].firstIndex(of: UInt8(ascii: "\n")) ?? length
            if end > 0 && bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            return end
        }
        guard end > 0 else {
            throw CLIFailure(
                .passphrase, "the passphrase file \(url.path) is empty; its first line must hold the passphrase")
        }
        return SecureBytes(count: end) { target in
            contents.withUnsafeBytes { source in
                target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[0..<end]))
            }
        }
    }

    /// Refuses a passphrase file that is not a regular file, not owned by this user, or that
    /// group or others may use. The file type first: the advice to chmod a device or a
    /// directory (the home directory, /dev/null) would do harm.
    static func checkPrivate(_ descriptor: Int32, path: String) throws {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw CLIFailure(
                .passphrase, "cannot read the passphrase file \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw CLIFailure(
                .passphrase,
                "the passphrase file \(path) is not a regular file; put the passphrase in a file of its own")
        }
        guard status.st_uid == geteuid() else {
            throw CLIFailure(
                .passphrase,
                "the passphrase file \(path) is not owned by you (owner uid \(status.st_uid)); "
                    + "a passphrase must be in a file of your own: copy it to a new file and run 'chmod 600' on it")
        }
        let mode = status.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw CLIFailure(
                .passphrase,
                "the passphrase file \(path) is accessible by group or others (mode "
                    + String(mode, radix: 8) + "); run 'chmod 600 \(path)'")
        }
    }

    private func fromPrompt(_ prompt: @Sendable (String) throws -> [UInt8], purpose: Purpose) throws -> SecureBytes {
        var first = try prompt("Passphrase to \(purpose.phrase): ")
        defer { secureZero(&first) }  // OPENSSL_cleanse: a plain loop may be optimised away
        guard !first.isEmpty else { throw CLIFailure(.passphrase, "the passphrase is empty") }
        let passphrase = SecureBytes(first)
        if case .protect = purpose {
            var second = try prompt("Repeat the passphrase: ")
            defer { secureZero(&second) }
            guard passphrase.constantTimeEquals(SecureBytes(second)) else {
                throw CLIFailure(.passphrase, "the two passphrases differ; nothing was stored")
            }
        }
        return passphrase
    }
}

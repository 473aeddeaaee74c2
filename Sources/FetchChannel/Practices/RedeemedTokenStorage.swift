import DeviceSigning
import Foundation

/// Reads and writes a ``RedeemedTokenFile`` through the key store's directory code (private
/// directory, atomic replace, cross-process write lock).
final class RedeemedTokenStorage: Sendable {
    let file: RedeemedTokenFile
    private let directory: KeyStoreDirectory

    private struct Contents: Codable {
        var version: Int
        var tokens: [String]
    }

    /// Opens (creating if needed) the file's directory and removes temporary files left by an
    /// interrupted write.
    init(_ file: RedeemedTokenFile) throws(RedeemedTokenFileError) {
        if let problem = file.nameProblem { throw RedeemedTokenFileError(path: file.path, reason: problem + ".") }
        guard file.directory.isFileURL else {
            throw RedeemedTokenFileError(path: file.path, reason: "the directory must be a file URL.")
        }
        self.file = file
        do {
            directory = try KeyStoreDirectory(path: file.directory.path, createIfMissing: true)
            try directory.removeStaleTemporaryFiles()
        } catch {
            throw Self.wrap(error, file)
        }
    }

    /// The tokens in the file, oldest first; none when there is no file yet.
    func load() throws(RedeemedTokenFileError) -> [String] {
        guard directory.exists(file.fileName) else { return [] }
        let contents: Contents
        do {
            let bytes = try directory.readFile(file.fileName, maximumBytes: RedeemedTokenFile.maximumBytes)
            contents = try bytes.withUnsafeBytes { try JSONDecoder().decode(Contents.self, from: Data($0)) }
        } catch is DecodingError {
            throw RedeemedTokenFileError(path: file.path, reason: "the file is not a redeemed-token list written by this package. Move it away to start with an empty set (operations already redeemed are then refused by the backend as already redeemed).")
        } catch {
            throw Self.wrap(error, file)
        }
        guard contents.version == 1 else {
            throw RedeemedTokenFileError(path: file.path, reason: "the file has version \(contents.version); this package reads version 1.")
        }
        return contents.tokens
    }

    /// Replaces the file with `tokens` (oldest first), atomically.
    func save(_ tokens: [String]) throws(RedeemedTokenFileError) {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.withoutEscapingSlashes]
            let data = try encoder.encode(Contents(version: 1, tokens: tokens))
            try directory.withExclusiveLock {
                try data.withUnsafeBytes { try directory.writeAtomically(file.fileName, contents: $0) }
            }
        } catch {
            throw Self.wrap(error, file)
        }
    }

    private static func wrap(_ error: any Error, _ file: RedeemedTokenFile) -> RedeemedTokenFileError {
        // The directory code words its errors for the key store; the reason (path, errno text,
        // the chmod/chown that fixes it) applies to this file alike.
        let reason = (error as? DeviceSigningError)?.reason ?? "\(error)"
        return RedeemedTokenFileError(path: file.path, reason: reason)
    }
}

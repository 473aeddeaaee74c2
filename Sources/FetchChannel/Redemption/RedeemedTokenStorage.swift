import DeviceSigning
import Foundation

/// Reads and writes a ``RedeemedTokenFile`` through the key store's directory code (private
/// directory, atomic replace, cross-process write lock).
final class RedeemedTokenStorage: Sendable {
    let file: RedeemedTokenFile
    private let directory: KeyStoreDirectory

    /// The current format, written by ``save(_:)``.
    private struct Contents: Codable {
        var version = RedeemedTokenFile.currentVersion
        var redeemed: [RedemptionIdentity]
    }

    /// The format before identities had an origin: read, and its tokens forgotten.
    private struct VersionOne: Decodable {
        var tokens: [String]
    }

    private struct Version: Decodable {
        var version: Int
    }

    /// Opens (creating if needed) the file's directory and removes temporary files left by an
    /// interrupted write.
    init(_ file: RedeemedTokenFile) throws(RedeemedTokenFileError) {
        if let problem = file.nameProblem {
            throw RedeemedTokenFileError(.invalidLocation, path: file.path, reason: problem + ".")
        }
        guard file.directory.isFileURL else {
            throw RedeemedTokenFileError(
                .invalidLocation, path: file.path, reason: "the directory must be a file URL.")
        }
        self.file = file
        do {
            directory = try KeyStoreDirectory(
                path: file.directory.path, createIfMissing: true, store: "redeemed-token store")
            try directory.removeStaleTemporaryFiles()
        } catch {
            throw Self.wrap(error, file)
        }
    }

    /// The identities in the file, oldest first; none when there is no file yet, and none from a
    /// version 1 file (its tokens name no origin: see ``RedeemedTokenFile``).
    ///
    /// A file larger than ``RedeemedTokenFile/maximumBytes``, or whose JSON repeats a member name,
    /// is corrupt: no version of this package writes one.
    func load() throws(RedeemedTokenFileError) -> [RedemptionIdentity] {
        do {
            let bytes: SecureBytes
            do {
                bytes = try directory.readFile(file.fileName, maximumBytes: RedeemedTokenFile.maximumBytes)
            } catch let error as DeviceSigningError where error.code == .keyNotFound {
                return []  // no file yet; any other failure to look is thrown
            } catch let error as DeviceSigningError where error.code == .corruptKeyFile {
                throw RedeemedTokenFileError(.corrupt, path: file.path, reason: error.reason + " " + Self.moveAway)
            }
            let data = bytes.withUnsafeBytes { Data($0) }
            try StrictJSON.requireUniqueMemberNames(data)
            let decoder = JSONDecoder()
            switch try decoder.decode(Version.self, from: data).version {
            case RedeemedTokenFile.currentVersion:
                return try decoder.decode(Contents.self, from: data).redeemed
            case 1:
                _ = try decoder.decode(VersionOne.self, from: data)  // well-formed, or refused as any corrupt file
                return []
            case let version:
                let reason =
                    "the file has version \(version); this package reads versions 1 and "
                    + "\(RedeemedTokenFile.currentVersion)."
                throw RedeemedTokenFileError(.unsupportedVersion, path: file.path, reason: reason)
            }
        } catch let error as RedeemedTokenFileError {
            throw error
        } catch is DecodingError, is StrictJSON.Violation {
            throw RedeemedTokenFileError(
                .corrupt, path: file.path,
                reason: "the file is not a redeemed-token list written by this package. " + Self.moveAway)
        } catch {
            throw Self.wrap(error, file)
        }
    }

    /// Adds `redeemed` (this pipeline's identities redeemed since its last successful write,
    /// oldest first) to the end of the file, atomically, in the current version, and keeps the
    /// newest `capacity`, or as many as the file held when that is more (a writer with a larger
    /// capacity shares it).
    ///
    /// The file's order is the order of redemption across every pipeline that shares it (other
    /// processes too): a write appends, and an identity the file has dropped (beyond a capacity)
    /// never comes back. The file is read and replaced under the directory's write lock, so two
    /// writers cannot both start from the same file and each drop what the other added. A file
    /// that no longer reads as a redeemed-token list (corrupt) is kept under a new name of its
    /// own (``keepCorruptCopy()``, a hard link, so that a write that fails leaves it where it
    /// was) and replaced, as it was before writes merged, by `everything` (the pipeline's whole
    /// set): the returned error says so and where the copy is. One that cannot be read now
    /// (another version, another mode, an I/O error) is left alone and the error thrown: the
    /// pipeline reports it as ``RedemptionPipeline/persistenceFailure`` and writes those
    /// identities with its next change.
    @discardableResult
    func save(
        _ redeemed: [RedemptionIdentity], replacingACorruptFileWith everything: () -> [RedemptionIdentity],
        capacity: Int
    ) throws(RedeemedTokenFileError) -> RedeemedTokenFileError? {
        do {
            return try directory.withExclusiveLock { () throws -> RedeemedTokenFileError? in
                var onDisk: [RedemptionIdentity]
                var replaced: RedeemedTokenFileError?
                do {
                    onDisk = try load()
                } catch let error as RedeemedTokenFileError where error.code == .corrupt {
                    // Kept, not overwritten: it may hold what other processes redeemed.
                    let copy = try keepCorruptCopy()
                    replaced = RedeemedTokenFileError(
                        .corrupt, path: file.path,
                        reason: "the file was corrupt; it was kept as \(directory.filePath(copy)) and "
                            + "replaced by this process's redeemed set.")
                    onDisk = everything()
                }
                // The file keeps as many as it held when a writer with a larger capacity shares
                // it: a smaller writer does not cut down what the other remembers.
                let kept = max(capacity, onDisk.count)
                let known = Set(onDisk)
                onDisk.append(contentsOf: redeemed.filter { !known.contains($0) })
                let data = try Self.encoded(Array(onDisk.suffix(kept)))
                try data.withUnsafeBytes { try directory.writeAtomically(file.fileName, contents: $0) }
                return replaced
            }
        } catch let error as RedeemedTokenFileError {
            throw error
        } catch {
            throw Self.wrap(error, file)
        }
    }

    /// Links the corrupt file under a name no earlier copy has, beside it:
    /// `<name>.corrupt-<seconds since 1970>`, then `-2`, `-3`… when that exists. Its name.
    private func keepCorruptCopy() throws -> String {
        let base = file.fileName + ".corrupt-" + String(Int64(Date().timeIntervalSince1970))
        for attempt in 1...1_000 {
            let name = attempt == 1 ? base : base + "-\(attempt)"
            if try directory.link(file.fileName, as: name) { return name }
        }
        throw RedeemedTokenFileError(
            .fileSystem, path: file.path, reason: "a thousand copies of a corrupt file are kept beside it already.")
    }

    private static let moveAway =
        "Move it away to start with an empty set (operations already redeemed are then refused by the backend as "
        + "already redeemed)."

    /// The file's contents for `identities` (oldest first): the newest of them that fit in
    /// ``RedeemedTokenFile/maximumBytes``, so that the file always loads again. Tokens and redeem
    /// URLs are bounded (``PendingOutOfBandOperation/RedeemData``), so only a capacity far above
    /// the default can reach the limit.
    static func encoded(
        _ identities: [RedemptionIdentity], maximumBytes: Int = RedeemedTokenFile.maximumBytes
    ) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        var kept = identities[...]
        while true {
            let data = try encoder.encode(Contents(redeemed: Array(kept)))
            if data.count <= maximumBytes || kept.isEmpty { return data }
            // The oldest go, about as many as the excess's share of the file, and at least one.
            let excess = Double(data.count - maximumBytes) / Double(data.count)
            kept = kept.dropFirst(Int((Double(kept.count) * excess).rounded(.up)) + 1)
        }
    }

    private static func wrap(_ error: any Error, _ file: RedeemedTokenFile) -> RedeemedTokenFileError {
        // The directory code words its errors for the key store; the reason (path, errno text,
        // the chmod/chown that fixes it) applies to this file alike.
        let failure = error as? DeviceSigningError
        let code: RedeemedTokenFileError.Code = failure?.code == .insecureKeyFile ? .insecure : .fileSystem
        return RedeemedTokenFileError(code, path: file.path, reason: failure?.reason ?? "\(error)")
    }
}

import DeviceSigning
import Foundation

/// Where a ``RedemptionPipeline`` keeps its redeemed set across restarts, so that a restart does
/// not start an operation twice. Off unless the app passes one.
///
/// The file is `directory/fileName`, JSON
/// `{"version":2,"redeemed":[{"origin":"https://host:443","token":"…"},…]}`: each redeemed
/// operation's ``RedemptionIdentity``, oldest first. A version 1 file (`{"version":1,"tokens":[…]}`,
/// written before identities had an origin) still loads, but as an empty set: its tokens name no
/// backend, and counting one as redeemed at every origin would let any backend suppress another's
/// operation. Nothing is started twice because of that: an operation redeemed before is refused
/// by its backend as already redeemed, which the pipeline reports as ``RedemptionReport/alreadyRedeemed(identity:)``
/// and remembers. The next change writes version 2.
///
/// It is written the way the key store writes keys (the same code): a new 0600 temporary
/// file in the directory, fsync, rename over the old file, fsync of the directory; so after a
/// crash it holds the previous or the new set, never a part. The directory is created with
/// mode 0700 if missing and, like the key store's, refused when it is not the user's own or is
/// open to group or others: whoever can write the file decides which operations this device
/// skips.
///
/// Several pipelines, in one process or several, may share a file: a write appends the writer's
/// newly redeemed identities to what the file holds (read again under the directory's write lock,
/// an `flock` on the empty file `.fetchchannel-lock` beside it)
/// and keeps the newest: as many as the writer's capacity, or as many as the file held when that
/// is more (so a writer with a small capacity does not cut down a larger one's). A pipeline learns
/// of the others' redemptions only when it starts; until then the backend refuses a token another
/// process redeemed as already redeemed.
///
/// Each change of the redeemed set rewrites the whole file (at the default capacity of 10,000
/// identities, under a MiB and two fsyncs per redemption). Redemptions follow a person's
/// actions, so this is rare; a redemption's report is returned only after the write.
public struct RedeemedTokenFile: Sendable, Hashable {
    /// The default file name.
    public static let defaultFileName = "redeemed-tokens.json"
    /// A larger file is refused on loading: it is not one this package wrote at any sane capacity.
    public static let maximumBytes = 64 << 20
    /// The version this package writes.
    public static let currentVersion = 2

    public let directory: URL
    public let fileName: String

    /// `fileName` must be a plain name: no `/`, not `.` or `..`, not starting with
    /// `.fetchchannel-` (the prefix of the temporary files and of the directory's lock file).
    public init(directory: URL, fileName: String = RedeemedTokenFile.defaultFileName) {
        // `..` kept (FilePathText): the file is the one `ls` would show for this path.
        self.directory = FilePathText.directory(directory)
        self.fileName = fileName
    }

    /// The names the directory's own files take (``KeyStoreDirectory``).
    static let reservedPrefix = ".fetchchannel-"

    /// The file's path.
    public var path: String { directory.appendingPathComponent(fileName).path }

    var nameProblem: String? {
        if fileName.isEmpty || fileName == "." || fileName == ".." || fileName.contains("/") {
            return "the file name '\(fileName)' is not a plain file name"
        }
        if fileName.hasPrefix(Self.reservedPrefix) {
            return "the file name '\(fileName)' starts with \(Self.reservedPrefix), which the package's temporary "
                + "and lock files use"
        }
        return nil
    }
}

import Foundation

/// A path as the file system will resolve it, tidied only where that cannot change which file it
/// names.
///
/// `.` segments and repeated or trailing slashes are taken out. A `..` is kept for the file system
/// to resolve, as every other tool does: after a symbolic link it leads to the link's target's
/// parent. Foundation's `standardizedFileURL` removes it with the segment before it when the path
/// does not exist yet, and resolves the link when it does, so the same path named one directory
/// before it was made and another after.
package enum FilePathText {
    /// `absolute` (a path starting with `/`) without `.` segments and repeated or trailing
    /// slashes; `..` kept. Any other text is returned as it is.
    package static func withoutDotSegments(_ absolute: String) -> String {
        guard absolute.hasPrefix("/") else { return absolute }
        let kept = absolute.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        return "/" + kept.joined(separator: "/")
    }

    /// The directory `url` names, tidied as ``withoutDotSegments(_:)`` says.
    package static func directory(_ url: URL) -> URL {
        URL(fileURLWithPath: withoutDotSegments(url.path), isDirectory: true)
    }
}

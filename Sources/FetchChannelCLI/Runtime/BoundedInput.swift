import DeviceSigning
import Foundation

/// Reads the files a command is given (keys, JWS) with a bound (``BoundedRead``): a huge or
/// endless input is refused at once instead of after it was loaded into memory.
enum BoundedInput {
    /// The largest key or JWS file the commands read (64 KiB); one byte more tells it was larger.
    static let maximumFileBytes = 64 * 1024

    /// The whole of `url`, or a `CLIFailure` that names it: unreadable, or larger than
    /// `maximumBytes` (`what` says what the file should have been, e.g. "a key file").
    static func read(_ url: URL, maximumBytes: Int = maximumFileBytes, what: String) throws -> Data {
        switch BoundedRead.contents(of: url.path, maximumBytes: maximumBytes) {
        case .success(let data):
            return data
        case .failure(.tooLarge):
            throw CLIFailure(
                .unreadableInput, "\(url.path) is larger than \(maximumBytes / 1024) KiB; it is not \(what)")
        case .failure(let failure):
            throw CLIFailure(.unreadableInput, "cannot read \(url.path): \(failure)")
        }
    }
}

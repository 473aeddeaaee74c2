/// The HTTP version of a request line (`HTTP/<major>.<minor>`).
///
/// Only 1.0 and 1.1 are served: a request of HTTP/1.2 or later is served (and has this version)
/// as 1.1, and any other major version is answered with 505.
public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    public var major: Int
    public var minor: Int

    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    public var description: String { "HTTP/\(major).\(minor)" }
}

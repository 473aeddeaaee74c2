import Foundation

/// The backend's device endpoint paths, as templates relative to the server's base URL.
///
/// Defaults are those of docs/ARCHITECTURE.md, "Wire contract"; a deployment that mounts the backend
/// elsewhere changes them here. Placeholders are replaced by the percent-encoded value (one path
/// segment: `/` and every other reserved character are encoded).
public struct FetchPaths: Sendable, Hashable {
    /// `GET`, with Device-Signature: the device's pending out-of-band operations.
    public static let defaultPendingOperations =
        WirePaths.basePath + WirePaths.pendingOperations + "/" + WirePaths.deviceIdPlaceholder

    public static let `default` = FetchPaths()

    /// Template with `{deviceId}`.
    public var pendingOperations: String

    public init(pendingOperations: String = FetchPaths.defaultPendingOperations) {
        self.pendingOperations = pendingOperations
    }

    /// The pending-operations path for `deviceId`.
    public func pendingOperationsPath(deviceId: String) -> String {
        pendingOperations.replacingOccurrences(of: WirePaths.deviceIdPlaceholder, with: Self.pathSegment(deviceId))
    }

    /// RFC 3986 unreserved characters stay, everything else is percent-encoded; `.` and `..`
    /// (which a URL resolver would collapse) are encoded too. Every id the package puts into a
    /// path goes through here (the CLI's rotation PATCH too), so one rule encodes them all.
    package static func pathSegment(_ value: String) -> String {
        if value == "." || value == ".." { return String(repeating: "%2E", count: value.count) }
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}

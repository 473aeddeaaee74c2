import DeviceSigning
import Foundation

/// Where a backend lives: scheme, host, port and the base path its URLs start with. A fetched
/// operation may be redeemed only inside the origin of the backend that returned it, and an
/// operation from a push, link or QR code only inside a registered backend's: a redeem token
/// never travels to a place the device did not register with.
///
/// Built from a backend URL (or from any URL, to name where it points). Parts are compared as
/// written, after the normalisations below; anything else that differs (`localhost` and
/// `127.0.0.1`, a trailing dot, percent-encoding) counts as another place, which errs on the side
/// of refusing.
public struct BackendOrigin: Sendable, Hashable, CustomStringConvertible {
    /// `https` or `http`, lowercased.
    public let scheme: String
    /// Lowercased; an IPv6 literal without its brackets.
    public let host: String
    /// Explicit, or the scheme's default (443, 80).
    public let port: Int
    /// The URL's path as written (percent-encoded), without trailing `/`: empty for the root.
    public let basePath: String
    /// `scheme://host:port` (IPv6 in brackets): for messages, and the origin of a
    /// ``RedemptionIdentity``. Made once: every fetched operation's identity uses it.
    public let origin: String

    /// Nil when `url` is not an `https`/`http` URL with a host, or has user info, or its path has
    /// a `.`/`..` segment or an encoded separator (also percent-encoded, `%2e%2e`, `%2f`, or
    /// followed by path parameters, `..;x`, which Java servlet containers resolve as `..`): such a
    /// URL could leave the base path once a server or the transport decodes and resolves it.
    public init?(url: URL) {
        guard let components = URLComponents(url: url.absoluteURL, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), let defaultPort = Self.defaultPorts[scheme],
            var host = components.percentEncodedHost?.lowercased(),
            components.percentEncodedUser == nil, components.percentEncodedPassword == nil
        else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let path = components.percentEncodedPath
        guard !host.isEmpty, Self.isConfined(path) else { return nil }
        // A port too large for an Int is read as none, which would be the default port.
        if components.port == nil, let written = components.rangeOfPort, !written.isEmpty { return nil }
        self.scheme = scheme
        self.host = host
        self.port = components.port ?? defaultPort
        var base = Substring(path)
        while base.hasSuffix("/") { base.removeLast() }
        self.basePath = String(base)
        let bracketed = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        self.origin = "\(scheme)://\(bracketed):\(self.port)"
    }

    /// Whether `url` is inside this origin: the same scheme, host and port, and a path that is the
    /// base path or below it (`/prefix` admits `/prefix` and `/prefix/…`, never `/prefixevil`).
    /// False for every URL ``init(url:)`` refuses (user info, dot segments, encoded separators).
    public func contains(_ url: URL) -> Bool {
        BackendOrigin(url: url).map(contains) ?? false
    }

    /// Whether `other` (a URL's origin and path) is inside this origin, as ``contains(_:)-URL`` says.
    func contains(_ other: BackendOrigin) -> Bool {
        guard other.scheme == scheme, other.host == host, other.port == port else { return false }
        return other.basePath == basePath || other.basePath.hasPrefix(basePath + "/")
    }

    /// The origin followed by the base path.
    public var description: String { origin + basePath }

    private static let defaultPorts = ["https": 443, "http": 80]

    /// Whether no segment of `path` (percent-encoded) is `.` or `..` (before any `;` parameters)
    /// or hides a separator, once decoded. A `%` not followed by two hex digits, or a segment that
    /// decodes to bytes that are not UTF-8, is refused, as `removingPercentEncoding` refuses them.
    /// Works on the UTF-8 bytes: every operation's redeem URL passes here on each fetch.
    private static func isConfined(_ path: String) -> Bool {
        path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).allSatisfy { segment in
            guard let decoded = percentDecoded(segment) else { return false }
            let dot = UInt8(ascii: ".")
            let name = decoded.prefix { $0 != UInt8(ascii: ";") }
            return !name.elementsEqual([dot]) && !name.elementsEqual([dot, dot])
                && !decoded.contains(UInt8(ascii: "/")) && !decoded.contains(UInt8(ascii: "\\"))
        }
    }

    /// The bytes `segment` stands for, or nil when its escapes or the result are not well-formed.
    private static func percentDecoded(_ segment: String.UTF8View.SubSequence) -> [UInt8]? {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(segment.count)
        var index = segment.startIndex
        while index != segment.endIndex {
            let byte = segment[index]
            index = segment.index(after: index)
            guard byte == UInt8(ascii: "%") else {
                decoded.append(byte)
                continue
            }
            guard index != segment.endIndex, let high = HexDigit.value(segment[index]) else { return nil }
            index = segment.index(after: index)
            guard index != segment.endIndex, let low = HexDigit.value(segment[index]) else { return nil }
            index = segment.index(after: index)
            decoded.append(high << 4 | low)
        }
        return String(validating: decoded, as: UTF8.self) == nil ? nil : decoded
    }

}

import FetchChannel
import Foundation

/// A backend's base URL as given with `--server`: `https://host[:port][/prefix]`, or `http://`
/// for a loopback host only, by the fetch client's own rule (`TransportSecurity.isLoopback`). No
/// user info, query or fragment, no dot segment or encoded separator in the path; the host is
/// lower-cased, a default port and a trailing slash are dropped.
///
/// A redeem URL (`redeem --redeem-url`, `asGiven`) follows the same rules but may have a query
/// and is kept exactly as written: it is the backend's URL for one operation, not a base to
/// compare registrations by.
struct BackendURL: Sendable, Hashable, CustomStringConvertible {
    let url: URL

    init(parsing text: String, option: String = "server", asGiven: Bool = false) throws(UsageError) {
        // Foundation would encode a stray '%' (`%zz` became `%25zz`): a URL other than the one given.
        guard Self.escapesAreWellFormed(text), let components = URLComponents(string: text),
            let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty
        else {
            throw UsageError(
                .invalidValue,
                "invalid value '\(ArgumentParser.shown(Self.shown(text)))' for '--\(option)': expected a URL such as "
                    + "https://backend.example (a '%' starts an escape of two hexadecimal digits)"
            )
        }
        // Encoded, as written: decoded, a name that is not UTF-8 (`%E9`) would read as none.
        guard components.percentEncodedUser == nil, components.percentEncodedPassword == nil,
            asGiven || components.query == nil,
            components.fragment == nil
        else {
            let parts = asGiven ? "user information or a fragment" : "user information, a query or a fragment"
            throw UsageError(.invalidValue, "the --\(option) URL must not contain \(parts)")
        }
        if let port = components.port, !(1...65_535).contains(port) {
            throw UsageError(.invalidValue, "the --\(option) URL's port must be 1 to 65535, not \(port)")
        }
        if components.port == nil, let written = components.rangeOfPort, !written.isEmpty {
            throw UsageError(.invalidValue, "the --\(option) URL's port must be 1 to 65535")  // too large for an Int
        }
        switch scheme {
        case "https":
            break
        case "http":
            guard TransportSecurity.isLoopback(host: host) else {
                throw UsageError(
                    .invalidValue,
                    "--\(option) must use https://; plain http:// is only allowed for loopback hosts (127.0.0.0/8, ::1, localhost)"
                )
            }
        default:
            throw UsageError(
                .invalidValue, "--\(option) must be an https:// URL (or http:// on loopback), not \(scheme)://")
        }
        if asGiven {
            guard let url = URL(string: text) else {
                throw UsageError(
                    .invalidValue, "invalid value '\(ArgumentParser.shown(Self.shown(text)))' for '--\(option)'")
            }
            guard BackendOrigin(url: url) != nil else { throw Self.climbingPath(option) }
            self.url = url
            return
        }
        // One spelling per backend, so that keys registered with it compare equal: the host in
        // lower case (as BackendOrigin compares it), no default port, no trailing slash.
        var normalized = components
        normalized.scheme = scheme
        normalized.percentEncodedHost = components.percentEncodedHost?.lowercased()
        if normalized.port == (scheme == "https" ? 443 : 80) { normalized.port = nil }
        // Trimmed as written: the decoded `path`, set back, would turn an encoded separator
        // (`/a%2Fb/`) into a real one, and the check below would pass a URL it refuses unslashed.
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        normalized.percentEncodedPath = path
        guard let url = normalized.url else {
            throw UsageError(
                .invalidValue, "invalid value '\(ArgumentParser.shown(Self.shown(text)))' for '--\(option)'")
        }
        // A path that could leave its prefix once decoded (`..`, `%2f`) has no origin to redeem
        // in: every fetched operation would be dropped.
        guard BackendOrigin(url: url) != nil else { throw Self.climbingPath(option) }
        self.url = url
    }

    private static func climbingPath(_ option: String) -> UsageError {
        UsageError(
            .invalidValue,
            "the --\(option) URL's path must not contain '.' or '..' segments, encoded separators (%2F, %5C) "
                + "or escapes that are not UTF-8")
    }

    /// Whether every '%' of `text` starts an escape of two hexadecimal digits.
    static func escapesAreWellFormed(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func isHexDigit(_ offset: Int) -> Bool {
            offset < bytes.count && Character(Unicode.Scalar(bytes[offset])).isHexDigit
        }
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "%") {
            guard isHexDigit(index + 1), isHexDigit(index + 2) else { return false }
        }
        return true
    }

    /// A stored server URL as output shows it: without user info (a hand-edited record may hold a
    /// password; register never stores one).
    static func shown(_ stored: String) -> String {
        URLUserInformation.removed(from: stored)
    }

    /// The base URL followed by `path` (which starts with "/"), each segment given percent-encoded.
    func appending(path: String) -> URL {
        URL(string: url.absoluteString + path) ?? url
    }

    var description: String { url.absoluteString }
}

extension ValueParser where Value == BackendURL {
    /// A backend URL by `BackendURL`'s rules, refused with the option's name.
    static var backendURL: ValueParser<BackendURL> {
        ValueParser { text, option throws(UsageError) in try BackendURL(parsing: text, option: option) }
    }

    /// A redeem URL: a backend URL that may have a query, kept as given.
    static var redeemURL: ValueParser<BackendURL> {
        ValueParser { text, option throws(UsageError) in try BackendURL(parsing: text, option: option, asGiven: true) }
    }
}

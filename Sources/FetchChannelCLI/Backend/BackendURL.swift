import Foundation

/// A backend's base URL as given with `--server`: `https://host[:port][/prefix]`, or `http://`
/// for a loopback host only (127.0.0.0/8, ::1, localhost), as the fetch client requires. No
/// user info, query or fragment; a trailing slash is dropped.
struct BackendURL: Sendable, Hashable, CustomStringConvertible {
    let url: URL

    init(parsing text: String, option: String = "server") throws(UsageError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty else {
            throw UsageError("invalid value '\(ArgumentParser.shown(text))' for '--\(option)': expected a URL such as https://backend.example")
        }
        guard components.user == nil, components.password == nil, components.query == nil, components.fragment == nil else {
            throw UsageError("the --\(option) URL must not contain user information, a query or a fragment")
        }
        switch scheme {
        case "https":
            break
        case "http":
            guard Self.isLoopback(host) else {
                throw UsageError("--\(option) must use https://; plain http:// is only allowed for loopback hosts (127.0.0.0/8, ::1, localhost)")
            }
        default:
            throw UsageError("--\(option) must be an https:// URL (or http:// on loopback), not \(scheme)://")
        }
        var normalized = components
        normalized.scheme = scheme
        while normalized.path.hasSuffix("/") { normalized.path.removeLast() }
        guard let url = normalized.url else {
            throw UsageError("invalid value '\(ArgumentParser.shown(text))' for '--\(option)'")
        }
        self.url = url
    }

    static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.lowercased() == "localhost" || bare == "::1" { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets.allSatisfy({ !$0.isEmpty && $0.count <= 3 && UInt8($0) != nil }) else { return false }
        return octets[0] == "127"
    }

    /// The base URL followed by `path` (which starts with "/"), each segment given percent-encoded.
    func appending(path: String) -> URL {
        URL(string: url.absoluteString + path) ?? url
    }

    var description: String { url.absoluteString }

    /// A path segment with everything but unreserved characters percent-encoded.
    static func segment(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

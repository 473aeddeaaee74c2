import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which URLs a device request may go to: HTTPS anywhere, plain HTTP only to loopback; no user
/// information in either.
///
/// A Device-Signature (and a redeem token) in clear text could be read and replayed by anyone on
/// the path, so `http://` is refused before any connection unless the host is a loopback address:
/// `localhost` (any case), an IPv4 literal in 127.0.0.0/8 written
/// as four decimal parts, or the IPv6 literal `::1` (any spelling, also `::ffff:127.x.y.z`). Host
/// names that merely resolve to loopback are not trusted, and neither is `localhost.` (a fully
/// qualified name that a resolver may send to DNS) or a short IPv4 form such as `127.1`: the rule
/// errs on the side of refusing. This is the package's one loopback rule: the CLI's `--server`
/// check uses it too.
package enum TransportSecurity {
    /// Nil when a request to `url` may be sent; otherwise why not (`insecureTransport` or `invalidURL`).
    /// A URL with user information is refused too (``URLUserInformation``).
    package static func refusal(for url: URL) -> NetworkFailure? {
        // The URL as a refusal shows it; made only for a refusal (this runs for every request).
        func shown() -> String { URLUserInformation.removed(from: url.absoluteString) }
        guard !URLUserInformation.isPresent(in: url) else {
            return NetworkFailure(
                .invalidURL,
                detail: "\(shown()) is given with a user name or password, which would be sent to the backend; "
                    + "the device authenticates by its signature alone")
        }
        guard let scheme = url.scheme?.lowercased() else {
            return NetworkFailure(.invalidURL, detail: "\(shown()) has no scheme")
        }
        guard let host = url.host, !host.isEmpty else {
            return NetworkFailure(.invalidURL, detail: "\(shown()) has no host")
        }
        switch scheme {
        case "https":
            return nil
        case "http":
            if isLoopback(host: host) { return nil }
            return NetworkFailure(.insecureTransport, detail: "http:// to \(host), which is not a loopback address")
        default:
            return NetworkFailure(.invalidURL, detail: "the scheme \(scheme) is neither https nor http")
        }
    }

    /// Whether `host` (as `URL.host` gives it; IPv6 with or without brackets) is a loopback address.
    package static func isLoopback(host: String) -> Bool {
        // `URL.host` decodes `%00`; C would read the name only up to it ("127.0.0.1\0.evil.example").
        guard !host.utf8.contains(0) else { return false }
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" { return true }

        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { $0[0] == 127 }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, name, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { bytes in
                let loopback = bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1
                let mapped =
                    bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
                    && bytes[12] == 127
                return loopback || mapped
            }
        }
        return false
    }
}

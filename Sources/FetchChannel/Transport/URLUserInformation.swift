import Foundation

/// User information in a URL (`https://user:password@host/`): never sent, never shown.
///
/// The device authenticates by its signature; a user name and password in a backend URL would be
/// sent by libcurl as an `Authorization: Basic` header on every request, and would appear in every
/// error that names the backend. The transport refuses such a URL (``TransportSecurity``), and
/// every text that shows one shows it through ``removed(from:)``.
package enum URLUserInformation {
    /// Whether `url` carries a user name or password (an empty one too: `https://@host/`). Asked
    /// for every request: the URL's own parse answers it, no second one. Percent-encoded, as
    /// written: decoded, a name that is not UTF-8 (`%E9`) would read as none.
    package static func isPresent(in url: URL) -> Bool {
        url.user(percentEncoded: true) != nil || url.password(percentEncoded: true) != nil
    }

    /// `text` (a URL) without its user information, for messages and names.
    package static func removed(from text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "@")) else { return text }  // none without an @
        guard var components = URLComponents(string: text) else { return withoutAuthorityPrefix(text) }
        guard components.percentEncodedUser != nil || components.percentEncodedPassword != nil else { return text }
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        return components.string ?? "(a URL with user information)"
    }

    /// `text` with its user information replaced by `***`: a name for a backend that shows no
    /// secret and is still not the name of the same URL given without user information.
    package static func masked(_ text: String) -> String {
        let shown = removed(from: text)
        guard shown != text, let start = shown.range(of: "//")?.upperBound else { return shown }
        return String(shown[..<start]) + "***@" + String(shown[start...])
    }

    /// `text` without what follows its `//` up to its last `@`: for text Foundation does not parse
    /// as a URL (`https://u:p/w@ho st/`), which may hold a password all the same. Where the
    /// authority ends cannot be told in such text, so everything that could be user information
    /// goes, a part of the path at worst.
    private static func withoutAuthorityPrefix(_ text: String) -> String {
        guard let start = text.range(of: "//")?.upperBound, let at = text[start...].lastIndex(of: "@") else {
            return text
        }
        return String(text[..<start]) + String(text[text.index(after: at)...])
    }
}

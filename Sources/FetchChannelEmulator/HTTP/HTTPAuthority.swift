import FetchChannelWire

/// The host and port a request is addressed to: a `Host` field value or the authority of an
/// absolute-form target (RFC 9110 §7.2, RFC 3986 §3.2.2), parsed strictly and never resolved.
///
/// The emulator answers only requests addressed to loopback (docs/ARCHITECTURE.md, "Wire
/// contract"): a web page that rebinds its own name to 127.0.0.1 still sends its own name here.
struct HTTPAuthority: Sendable, Hashable {
    enum Host: Sendable, Hashable {
        /// `localhost`, any letter case, without a trailing dot.
        case localhost
        /// A dotted-quad IPv4 literal, or an IPv6 literal that was written in brackets.
        case address(HTTPIPAddress)
    }

    let host: Host
    /// nil when the authority has no port (or an empty one, which RFC 3986 allows).
    let port: Int?

    /// Parses `host [":" port]` where host is `localhost`, an IPv4 literal or a bracketed IPv6
    /// literal; nil for any other name (including `localhost.`), userinfo, or a port that is not
    /// 0...65535 in digits.
    init?(_ text: String) {
        let hostText: Substring
        let portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            hostText = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return nil }
            portText = rest.isEmpty ? nil : rest.dropFirst()
        } else {
            let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            hostText = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
        }
        if let portText, !portText.isEmpty {
            guard portText.count <= 5, portText.utf8.allSatisfy(HTTPSyntax.isDigit),
                let port = Int(portText), port <= 65_535
            else { return nil }
            self.port = port
        } else {
            self.port = nil
        }
        // HTTPIPAddress also reads "localhost" and strips brackets: the written form decides what counts.
        let bracketed = text.hasPrefix("[")
        if !bracketed, HTTPHeaders.namesEqual(String(hostText), "localhost") {
            host = .localhost
        } else if !hostText.contains("["), let address = HTTPIPAddress(literal: String(hostText)) {
            switch (bracketed, address) {
            case (true, .v6), (false, .v4): host = .address(address)
            default: return nil
            }
        } else {
            return nil
        }
    }

    /// The authorities a request names: its absolute-form target's and its `Host` field's (either
    /// may be absent; an HTTP/1.1 request always has one Host field). nil when one of them is
    /// present but not a valid authority.
    static func named(by request: HTTPRequest) -> [HTTPAuthority]? {
        var texts = request.headers.values(for: WireHeader.host)
        if !request.target.hasPrefix("/"), request.target != "*", let schemeEnd = request.target.range(of: "://") {
            let afterScheme = request.target[schemeEnd.upperBound...]
            texts.append(String(afterScheme.prefix { $0 != "/" && $0 != "?" }))
        }
        var authorities: [HTTPAuthority] = []
        for text in texts {
            guard let authority = HTTPAuthority(text) else { return nil }
            authorities.append(authority)
        }
        return authorities
    }

    /// Whether the request names a loopback host and nothing else: at least one authority, and every
    /// one of them `localhost`, 127.0.0.0/8 or ::1 (or IPv4-mapped 127.0.0.0/8), any port.
    static func namesOnlyLoopback(_ request: HTTPRequest) -> Bool {
        guard let authorities = named(by: request), !authorities.isEmpty else { return false }
        return authorities.allSatisfy(\.isLoopback)
    }

    var isLoopback: Bool {
        switch host {
        case .localhost: return true
        case .address(let address): return address.isLoopback
        }
    }
}

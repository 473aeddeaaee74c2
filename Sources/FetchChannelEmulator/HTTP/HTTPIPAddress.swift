import Glibc

/// A numeric IPv4 or IPv6 address, parsed with `inet_pton`.
///
/// The server binds only numeric literals (plus `localhost`, read as 127.0.0.1) so that the
/// loopback check cannot be fooled by name resolution.
enum HTTPIPAddress: Sendable, Hashable {
    case v4([UInt8])
    case v6([UInt8])

    /// Parses "127.0.0.1", "::1", "[::1]" or "localhost"; nil for anything else (names are not resolved).
    init?(literal: String) {
        var text = literal
        if text.lowercased() == "localhost" {
            text = "127.0.0.1"
        }
        if text.hasPrefix("["), text.hasSuffix("]") {
            text = String(text.dropFirst().dropLast())
        }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = .v4(withUnsafeBytes(of: &v4) { Array($0) })
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            self = .v6(withUnsafeBytes(of: &v6) { Array($0) })
            return
        }
        return nil
    }

    /// 127.0.0.0/8, ::1, and IPv4-mapped 127.0.0.0/8 (::ffff:127.x.y.z).
    var isLoopback: Bool {
        switch self {
        case .v4(let bytes):
            return bytes.first == 127
        case .v6(let bytes):
            guard bytes.count == 16 else { return false }
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 {
                return true
            }
            let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            return mapped && bytes[12] == 127
        }
    }

    var family: Int32 {
        switch self {
        case .v4: return AF_INET
        case .v6: return AF_INET6
        }
    }

    /// The canonical numeric text (`inet_ntop`), e.g. "::1" for "0:0:0:0:0:0:0:1".
    var numericString: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = self.family
        let bytes: [UInt8]
        switch self {
        case .v4(let b), .v6(let b): bytes = b
        }
        let converted = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &text, socklen_t(text.count)) != nil
        }
        guard converted else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Host as it appears in a URL: IPv6 in brackets.
    var urlHost: String {
        switch self {
        case .v4: return numericString
        case .v6: return "[\(numericString)]"
        }
    }

    /// Calls `body` with a `sockaddr` for this address and `port` (host byte order).
    func withSocketAddress<R>(port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        switch self {
        case .v4(let bytes):
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: bytes.prefix(4)) }
            return Self.lend(address, body)
        case .v6(let bytes):
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: bytes.prefix(16)) }
            return Self.lend(address, body)
        }
    }

    /// Lends `address` (a `sockaddr_in` or `sockaddr_in6`) to `body` as a `sockaddr` and its size.
    private static func lend<Address, R>(
        _ address: Address, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R
    ) -> R {
        withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }

    /// Reads an address and port (host byte order) out of a `sockaddr_storage` filled by the kernel.
    static func from(storage: sockaddr_storage) -> (address: HTTPIPAddress, port: Int)? {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafeBytes(of: &storage) { raw in
                let address = raw.loadUnaligned(as: sockaddr_in.self)
                let bytes = withUnsafeBytes(of: address.sin_addr) { Array($0) }
                return (.v4(bytes), Int(UInt16(bigEndian: address.sin_port)))
            }
        case AF_INET6:
            return withUnsafeBytes(of: &storage) { raw in
                let address = raw.loadUnaligned(as: sockaddr_in6.self)
                let bytes = withUnsafeBytes(of: address.sin6_addr) { Array($0) }
                return (.v6(bytes), Int(UInt16(bigEndian: address.sin6_port)))
            }
        default:
            return nil
        }
    }
}

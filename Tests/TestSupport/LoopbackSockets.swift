import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// This process's own TCP sockets on loopback, found by their addresses: for tests that check a
/// socket's flags (close-on-exec, non-blocking) where only the other side's port is known.
public enum LoopbackSockets {
    /// The descriptors of this process whose peer is 127.0.0.1:`port`. A server's accepted
    /// socket has the client's port as its peer, and a client's socket the server's.
    public static func descriptors(withPeerPort port: Int) -> [Int32] {
        descriptors { fd in address(of: fd, getpeername).map { isLoopback($0, port: port) } ?? false }
    }

    /// The descriptors of this process bound to 127.0.0.1:`port`: a server's listener and the
    /// connections it accepted.
    public static func descriptors(withLocalPort port: Int) -> [Int32] {
        descriptors { fd in address(of: fd, getsockname).map { isLoopback($0, port: port) } ?? false }
    }

    private static func descriptors(where matches: (Int32) -> Bool) -> [Int32] {
        let limit = Int32(clamping: min(max(sysconf(Int32(_SC_OPEN_MAX)), 1_024), 65_536))
        return (0..<limit).filter(matches)
    }

    private static func isLoopback(_ address: sockaddr_in, port: Int) -> Bool {
        Int(UInt16(bigEndian: address.sin_port)) == port && address.sin_addr.s_addr == in_addr_t(0x7F00_0001).bigEndian
    }

    /// The local port of the IPv4 socket `fd`, or nil.
    public static func localPort(of fd: Int32) -> Int? {
        address(of: fd, getsockname).map { Int(UInt16(bigEndian: $0.sin_port)) }
    }

    private static func address(
        of fd: Int32, _ name: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> sockaddr_in? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { name(fd, $0, &length) }
        }
        return named == 0 && address.sin_family == sa_family_t(AF_INET) ? address : nil
    }
}

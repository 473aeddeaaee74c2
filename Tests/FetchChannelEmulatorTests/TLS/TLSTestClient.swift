internal import COpenSSL
import Foundation

/// A TLS 1.3 client on libssl for what curl and `openssl s_client` cannot be told to do at a
/// chosen moment: send a KeyUpdate on a kept-alive connection. No certificate check (the server is
/// the test's own, on loopback); blocking calls, so it runs on a dedicated thread.
final class TLSTestClient {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let fd: Int32
    private let context: OpaquePointer
    private let ssl: OpaquePointer

    init(port: Int) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Foundation.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0, let context = SSL_CTX_new(TLS_client_method()) else {
            close(descriptor)
            throw Failure(description: "connect or SSL_CTX_new failed (errno \(errno))")
        }
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            close(descriptor)
            throw Failure(description: "SSL_new failed")
        }
        (fd, self.context, self.ssl) = (descriptor, context, ssl)
        guard SSL_set_fd(ssl, descriptor) == 1, SSL_connect(ssl) == 1 else {
            throw Failure(description: "the TLS handshake failed")
        }
        guard SSL_version(ssl) == TLS1_3_VERSION else { throw Failure(description: "not TLS 1.3") }
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
        close(fd)
    }

    /// Sends `request` and reads until the answer's head has arrived; its status line.
    func send(_ request: String) throws -> String {
        let bytes = Array(request.utf8)
        var written = 0
        guard SSL_write_ex(ssl, bytes, bytes.count, &written) == 1 else {
            throw Failure(description: "SSL_write failed")
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: answer, as: UTF8.self).contains("\r\n\r\n") {
            var count = 0
            guard SSL_read_ex(ssl, &buffer, buffer.count, &count) == 1 else {
                throw Failure(description: "SSL_read failed")
            }
            answer += buffer[0..<count]
        }
        return String(decoding: answer, as: UTF8.self).components(separatedBy: "\r\n").first ?? ""
    }

    /// Whether the server ends the connection with a close_notify (a clean TLS end) within
    /// `timeout`, rather than closing it without one or not at all.
    func readsCloseNotify(within timeout: Duration) -> Bool {
        var limit = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        guard setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
            return false
        }
        var buffer = [UInt8](repeating: 0, count: 256)
        var count = 0
        let result = SSL_read_ex(ssl, &buffer, buffer.count, &count)
        return result == 0 && SSL_get_error(ssl, result) == SSL_ERROR_ZERO_RETURN
    }

    /// A KeyUpdate that asks the server for one in turn, sent now.
    func sendKeyUpdate() throws {
        guard SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) == 1, SSL_do_handshake(ssl) == 1 else {
            throw Failure(description: "the KeyUpdate was not sent")
        }
    }
}

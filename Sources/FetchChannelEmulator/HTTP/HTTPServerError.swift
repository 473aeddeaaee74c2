import DeviceSigning
import Glibc

/// Why `HTTPServer.start()` failed. Equality compares only the stable `code`, so tests can write
/// `#expect(throws: HTTPServerError(.nonLoopbackHost))`.
public struct HTTPServerError: CodedError {
    /// A stable identifier for logs and tests.
    public struct Code: ErrorCode, RawRepresentable {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The configured host is not a numeric IPv4/IPv6 address (or `localhost`).
        public static let invalidHost = Code(rawValue: "invalid-host")
        /// The configured host is not loopback and `allowNonLoopback` is false.
        public static let nonLoopbackHost = Code(rawValue: "non-loopback-host")
        /// A configuration value is out of range (port, limits, timeouts).
        public static let invalidConfiguration = Code(rawValue: "invalid-configuration")
        /// socket(), setsockopt(), fcntl() or pipe() failed.
        public static let socketFailed = Code(rawValue: "socket-failed")
        /// bind() failed, typically because the port is in use.
        public static let bindFailed = Code(rawValue: "bind-failed")
        /// listen() or getsockname() failed.
        public static let listenFailed = Code(rawValue: "listen-failed")
        /// The accept thread could not be created.
        public static let threadStartFailed = Code(rawValue: "thread-start-failed")
        /// start() was called on a running server.
        public static let alreadyStarted = Code(rawValue: "already-started")
        /// start() was called after stop(); a server is not restartable, create a new one.
        public static let alreadyStopped = Code(rawValue: "already-stopped")
        /// The TLS identity could not be generated or loaded (unreadable file, not PEM, a key that
        /// is not P-256 or does not match the certificate).
        public static let tlsIdentityFailed = Code(rawValue: "tls-identity-failed")
    }

    public let code: Code
    /// What happened and, where possible, what to do about it.
    public let reason: String
    /// The `errno` of the failing system call, if one failed.
    public let systemErrno: Int32?

    public init(_ code: Code, _ reason: String = "", errno systemErrno: Int32? = nil) {
        self.code = code
        self.reason = reason
        self.systemErrno = systemErrno
    }

    public var description: String {
        var text = "HTTPServerError(\(code)): \(reason)"
        if let systemErrno {
            text += " (errno \(systemErrno): \(String(cString: strerror(systemErrno))))"
        }
        return text
    }
}

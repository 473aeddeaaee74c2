#if os(Linux)
    import Foundation
    import Glibc

    /// Reads a CA file (``TLSTrust/Anchors/pemFile(path:)``) for a request, here rather than by
    /// libcurl, whose CA files are opened with a blocking open(2) and read to the end on the
    /// transport's thread: a FIFO without a writer there would block every request for ever, and a
    /// device such as /dev/zero would never end. The path is opened without blocking and must be a
    /// regular file of at most ``maximumBytes``; its bytes reach libcurl as a CA blob. Read again
    /// for every request, so a CA taken out of the file stops being trusted at the next connection,
    /// and a kept-alive connection is reused only while the file still holds what it was made with.
    enum CertificateAuthorityFile {
        /// As a bundle given in memory (``TLSTrust/maximumBundleBytes``); Debian's whole system
        /// bundle is about 220 KB. OpenSSL parses the file at every new connection, under the
        /// transport's lock, so its size bounds how long the other transfers wait then: about
        /// 0.1 s at this size (0.5 s at 4 MiB, the limit before).
        static let maximumBytes = TLSTrust.maximumBundleBytes

        static func read(_ path: String, trust: TLSTrust) -> Result<Data, NetworkFailure> {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
            guard descriptor >= 0 else { return .failure(failure(trust, String(cString: strerror(errno)))) }
            defer { close(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0 else {
                return .failure(failure(trust, String(cString: strerror(errno))))
            }
            guard info.st_mode & S_IFMT == S_IFREG else { return .failure(failure(trust, "not a regular file")) }
            guard info.st_size <= maximumBytes else {
                return .failure(failure(trust, "larger than \(maximumBytes >> 20) MiB"))
            }
            var contents = Data()
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let count = Glibc.read(descriptor, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { return .failure(failure(trust, String(cString: strerror(errno)))) }
                if count == 0 { return .success(contents) }
                // The file may grow after fstat: the limit holds for what is read.
                guard contents.count + count <= maximumBytes else {
                    return .failure(failure(trust, "larger than \(maximumBytes >> 20) MiB"))
                }
                contents.append(contentsOf: buffer.prefix(count))
            }
        }

        /// Worded as libcurl's CURLE_SSL_CACERT_BADFILE is (``CurlFailureMapping``).
        private static func failure(_ trust: TLSTrust, _ problem: String) -> NetworkFailure {
            NetworkFailure(
                .tlsUntrustedCertificate,
                detail: "\(CurlFailureMapping.capitalized(trust.anchorsDescription)) could not be loaded (\(problem)). "
                    + "Check that it exists, is readable and holds PEM certificates.")
        }
    }
#endif
